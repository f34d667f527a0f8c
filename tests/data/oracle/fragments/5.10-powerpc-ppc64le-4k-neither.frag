# base: make ARCH=powerpc ppc64le_defconfig   (kernel tree 5.10, 5.10.223)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_PPC_64K_PAGES is not set
CONFIG_PPC_4K_PAGES=y
# CONFIG_HUGETLBFS is not set
# CONFIG_TRANSPARENT_HUGEPAGE is not set
