"""calc from a defconfig + fragment, evaluated through the kernel tree's Kconfig, against the
kernel-header oracle: the values the real kernel's compiler computed for
`make <defconfig>` + the case's fragment + `make olddefconfig`.

The oracle's complete .configs are tested elsewhere (tests/kernel/truth_test.cpp); here cmalign
gets only what a board repository keeps: the defconfig file and the fragment.
"""
import json
import os
import subprocess
import tempfile

import pytest

import cmalign

KSRC = "/opt/cmalign/ksrc"
HERE = os.path.dirname(os.path.abspath(__file__))
ORACLES = [os.path.join(HERE, "..", "data", "oracle")]
CLI = os.environ.get("CMALIGN_CLI", os.path.join(HERE, "..", "..", "build", "cmalign"))
# make ARCH -> arch/<dir>
SRCARCH = {"x86_64": "x86", "i386": "x86", "sparc64": "sparc"}


def cases():
    out = []
    for root in ORACLES:
        path = os.path.join(root, "cases.jsonl")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                if line.strip():
                    out.append((root, json.loads(line)))
    return out


def run_case(root, case):
    """The case's fragment applied as the oracle applied it (first comment lines of the .frag):
    "method fresh": onto the defconfig, one kconfig run (merge_config.sh); "method seq": onto the
    whole .config that `make <defconfig>` wrote, then olddefconfig (two runs: `cmalign config`
    writes that .config, calc reads it with the fragment)."""
    tree = os.path.join(KSRC, "linux-source-" + case["kernel_tree"])
    srcarch = SRCARCH.get(case["arch"], case["arch"])
    defconfig = os.path.join(tree, "arch", srcarch, "configs", case["defconfig"])
    frag = os.path.join(root, "fragments", case["id"] + ".frag")
    with open(frag) as f:
        seq = "# method seq:" in f.read()
    if not seq:
        return cmalign.calc(configs=[defconfig, frag], arch=case["arch"], kernel_tree=tree)
    full = subprocess.run([CLI, "config", "--kernel-tree", tree, "--arch", case["arch"], "-c", defconfig],
                          capture_output=True, text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".config") as f:
        f.write(full)
        f.flush()
        return cmalign.calc(configs=[f.name, frag], arch=case["arch"], kernel_tree=tree)


def test_calc_from_defconfig_and_fragment_equals_the_kernel_headers():
    all_cases = cases()
    trees = {c["kernel_tree"] for _, c in all_cases}
    missing = [t for t in sorted(trees) if not os.path.exists(os.path.join(KSRC, "linux-source-" + t, "Kconfig"))]
    if missing:
        if os.environ.get("CI") or os.environ.get("CMALIGN_REQUIRE_MATERIAL"):
            pytest.fail("kernel trees missing: " + ", ".join(missing))
        pytest.skip("kernel trees missing: " + ", ".join(missing))
    checked, generated, unsupported, wrong = 0, [], [], []
    for root, case in all_cases:
        tree = os.path.join(KSRC, "linux-source-" + case["kernel_tree"])
        srcarch = SRCARCH.get(case["arch"], case["arch"])
        if not os.path.exists(os.path.join(tree, "arch", srcarch, "configs", case["defconfig"])):
            generated.append(case["id"])  # an arch Makefile target, not a file
            continue
        try:
            got = run_case(root, case)
        except cmalign.Error as e:
            if "architecture" in str(e) or "arch" in str(e):
                unsupported.append(case["id"])
                continue
            raise
        truth = case["truth"]
        want = {"page_size": truth["PAGE_SIZE"], "max_page_order": truth["MAX_PAGE_ORDER"]}
        if isinstance(truth.get("pageblock_order"), int):
            want["pageblock_order"] = truth["pageblock_order"]
        if isinstance(truth.get("CMA_MIN_ALIGNMENT_BYTES"), int):
            want["cma_min_alignment_bytes"] = truth["CMA_MIN_ALIGNMENT_BYTES"]
        diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        if diff:
            wrong.append(f"{case['id']}: {diff}")
        checked += 1
    print(f"oracle from defconfig + fragment: {checked - len(wrong)}/{checked} equal; "
          f"{len(generated)} generated targets and {len(unsupported)} unmodelled arches not run")
    assert not wrong, "\n".join(wrong)
    assert checked >= 60
