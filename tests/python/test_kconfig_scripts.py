"""tests/differential/kconfig-compare and kconfig-truth's helpers, on hand-made truth and a stand-in for
cmalign (the real comparison against the kernel's make runs in ctest kconfig_truth_subset)."""
import importlib.machinery
import importlib.util
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load(name):
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(ROOT / "tests" / "differential" / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


compare = load("kconfig-compare")
truth = load("kconfig-truth")

TRUTH = """#
# Automatically generated file; DO NOT EDIT.
# Linux/arm64 6.12.117 Kernel Configuration
#
CONFIG_CC_VERSION_TEXT="gcc (Debian 12.2.0-14) 12.2.0"
CONFIG_ARM64=y
CONFIG_ARM64_16K_PAGES=y
# CONFIG_ARM64_4K_PAGES is not set
CONFIG_ARCH_FORCE_MAX_ORDER=11
CONFIG_CMA=y
CONFIG_DMA_CMA=y
CONFIG_FOO=m
"""


def test_parse_keeps_not_set_apart_from_absent():
    parsed = compare.parse_config(TRUTH)
    assert parsed["ARM64_4K_PAGES"] == "n"
    assert parsed["CC_VERSION_TEXT"] == '"gcc (Debian 12.2.0-14) 12.2.0"'
    assert "ARM64_64K_PAGES" not in parsed
    ours = dict(parsed)
    del ours["ARM64_4K_PAGES"]  # an invisible symbol is not a visible n
    r = compare.compare(ours, parsed)
    assert r["differ"] == ["ARM64_4K_PAGES"]
    assert r["deciding_differ"] == ["ARM64_4K_PAGES"]
    assert r["symbols"] == len(parsed)


def test_expand_braces_as_mips_make_help():
    names = truth.expand_braces("{micro32,32,64}{r1,r2,r6}{el,}_defconfig")
    assert len(names) == 18
    assert "32r2el_defconfig" in names and "micro32r6_defconfig" in names


def fake_setup(tmp_path, ours_text):
    out = tmp_path / "truth"
    (out / "6.12/arm64").mkdir(parents=True)
    (out / "6.12/arm64/defconfig.config").write_text(TRUTH)
    manifest = {"version": "6.12", "arch": "arm64", "tree": str(tmp_path / "linux"),
                "modes": {"host": {"entries": [{"name": "defconfig", "kind": "file", "ok": True,
                                                "inputs": ["arch/arm64/configs/defconfig"],
                                                "config": "6.12/arm64/defconfig.config"}]}}}
    (out / "6.12/arm64/manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "ours.config").write_text(ours_text)
    fake = tmp_path / "cmalign"
    # Stands in for `cmalign config --kernel-tree T --arch A -c …`: checks its arguments.
    fake.write_text("#!/bin/sh\n"
                    f"[ \"$1 $2 $3 $4 $5\" = \"config --kernel-tree {tmp_path}/linux --arch arm64\" ] || exit 3\n"
                    f"cat {tmp_path}/ours.config\n")
    fake.chmod(0o755)
    return out, fake


def run_compare(out, fake):
    return subprocess.run([sys.executable, str(ROOT / "tests/differential/kconfig-compare"), "--truth", str(out),
                           "--cmalign", str(fake), "--mode", "plain"], capture_output=True, text=True)


def test_compare_passes_on_the_same_config(tmp_path):
    r = run_compare(*fake_setup(tmp_path, TRUTH))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1/1" in r.stdout and "100.00%" in r.stdout
    assert "all goals met" in r.stdout


def test_compare_fails_on_a_deciding_symbol(tmp_path):
    r = run_compare(*fake_setup(tmp_path, TRUTH.replace("CONFIG_DMA_CMA=y", "# CONFIG_DMA_CMA is not set")))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "deciding: DMA_CMA" in r.stdout
    assert "goals NOT met" in r.stdout
