# base: make ARCH=s390 defconfig   (kernel tree 5.10, 5.10.223)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_HUGETLBFS is not set
# CONFIG_TRANSPARENT_HUGEPAGE is not set
