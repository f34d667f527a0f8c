# base: make ARCH=powerpc ppc64le_defconfig   (kernel tree 7.2, 7.2.13)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_PPC_64K_PAGES is not set
CONFIG_PPC_4K_PAGES=y
# CONFIG_HUGETLBFS is not set
# CONFIG_TRANSPARENT_HUGEPAGE is not set
