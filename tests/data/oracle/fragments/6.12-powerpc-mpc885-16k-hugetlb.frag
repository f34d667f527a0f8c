# base: make ARCH=powerpc mpc885_ads_defconfig   (kernel tree 6.12, 6.12.117)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_PPC_4K_PAGES is not set
CONFIG_PPC_16K_PAGES=y
CONFIG_HUGETLBFS=y
