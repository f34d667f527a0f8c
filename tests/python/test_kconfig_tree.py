"""cmalign.calc() with kernel_tree: Kconfig evaluation fills in what a defconfig leaves unset."""
import os

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
