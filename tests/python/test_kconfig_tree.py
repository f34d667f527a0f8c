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


def test_calc_from_defconfig_and_fragment_uses_kconfig():
    tree_or_fail()
    defconfig = os.path.join(TREE, "arch/arm64/configs/defconfig")
    result = cmalign.calc(configs=[defconfig], sets={"CONFIG_ARM64_16K_PAGES": "y"},
                          arch="arm64", kernel_tree=TREE)
    # 16 KiB pages, MAX_ORDER 11 (Kconfig default for 16K): 16 KiB << 11 = 32 MiB.
    assert result["cma_min_alignment_bytes"] == 32 * 1024 * 1024


def test_kconfig_shell_is_accepted():
    tree_or_fail()
    defconfig = os.path.join(TREE, "arch/arm64/configs/defconfig")
    result = cmalign.calc(configs=[defconfig], arch="arm64", kernel_tree=TREE, kconfig_shell=True)
    assert result["cma_min_alignment_bytes"] == 2 * 1024 * 1024  # 4 KiB << 9
