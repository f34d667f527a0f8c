"""cmalign.calc() with kernel_tree: Kconfig evaluation fills in what a defconfig leaves unset."""
import os
import re
import subprocess

import pytest

import cmalign

TREE = "/opt/cmalign/ksrc/linux-source-6.12"


def tree_or_fail():
    if not os.path.exists(os.path.join(TREE, "Kconfig")):
        if os.environ.get("CI"):
            pytest.fail("kernel tree missing: " + TREE)
        pytest.skip("kernel tree missing: " + TREE)


def test_calc_from_defconfig_and_fragment_uses_kconfig(tmp_path):
    tree_or_fail()
    defconfig = os.path.join(TREE, "arch/arm64/configs/defconfig")
    sets = {"CONFIG_ARM64_16K_PAGES": "y", "CONFIG_ARCH_FORCE_MAX_ORDER": "13"}
    result = cmalign.calc(configs=[defconfig], sets=sets, arch="arm64", kernel_tree=TREE)
    # 16 KiB pages, MAX_ORDER 11 (Kconfig default for 16K): 16 KiB << 11 = 32 MiB. Upstream
    # arm64 has no prompt for ARCH_FORCE_MAX_ORDER, so kconfig drops the 13: only an evaluation
    # of the tree gives 11 (without the tree the value is honoured, with a warning).
    assert result["max_page_order"] == 11
    assert result["cma_min_alignment_bytes"] == 32 * 1024 * 1024
    # Where Kconfig decided a value, the derivation names the Kconfig line (the keys of docs/json.md).
    inputs = {i["symbol"]: i for step in result["derivation"] for i in step["inputs"]}
    order = inputs["CONFIG_ARCH_FORCE_MAX_ORDER"]
    assert set(order) == {"symbol", "value", "file", "line"}
    assert order["value"] == "11"
    assert order["file"] == "arch/arm64/Kconfig" and order["line"] > 0
    # A copy outside the tree (the tree is found from a -c file's path otherwise).
    copy = tmp_path / "defconfig"
    copy.write_text(open(defconfig).read())
    unevaluated = cmalign.calc(configs=[str(copy)], sets=sets, arch="arm64", kernel_version="6.12")
    assert unevaluated["max_page_order"] == 13


def test_kconfig_shell_is_accepted():
    tree_or_fail()
    defconfig = os.path.join(TREE, "arch/arm64/configs/defconfig")
    result = cmalign.calc(configs=[defconfig], arch="arm64", kernel_tree=TREE, kconfig_shell=True)
    assert result["cma_min_alignment_bytes"] == 2 * 1024 * 1024  # 4 KiB << 9


def test_table_takes_the_version_of_the_kernel_tree():
    tree_or_fail()
    with open(os.path.join(TREE, "Makefile")) as f:
        fields = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)$", f.read(), re.M))
    version = ".".join(fields[k] for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL"))
    by_tree = cmalign.table(arch="arm64", kernel_tree=TREE)
    assert by_tree == cmalign.table(arch="arm64", kernel_version=version)
    # The newest modelled version draws another grid for arm64 (page block order from 6.16).
    assert by_tree != cmalign.table(arch="arm64")
    # The command line finds the tree from the working directory and says so.
    cli = os.environ.get("CMALIGN_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "cmalign"))
    r = subprocess.run([cli, "table", "--arch", "arm64"], cwd=os.path.join(TREE, "arch"),
                       capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stdout.splitlines()[0] == "CMA alignment for arm64 " + version
    assert "using kernel " + version + " of the tree " + TREE in r.stderr
