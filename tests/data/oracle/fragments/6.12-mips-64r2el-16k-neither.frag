# base: make ARCH=mips 64r2el_defconfig   (kernel tree 6.12, 6.12.117)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_PAGE_SIZE_4KB is not set
CONFIG_PAGE_SIZE_16KB=y
# CONFIG_HUGETLBFS is not set
# CONFIG_TRANSPARENT_HUGEPAGE is not set
