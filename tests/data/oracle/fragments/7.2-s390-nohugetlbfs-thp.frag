# base: make ARCH=s390 defconfig   (kernel tree 7.2, 7.2.13)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_HUGETLBFS is not set
CONFIG_TRANSPARENT_HUGEPAGE=y
