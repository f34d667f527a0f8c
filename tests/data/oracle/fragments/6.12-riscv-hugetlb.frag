# base: make ARCH=riscv defconfig   (kernel tree 6.12, 6.12.117)
# method seq: scripts/config --file .config <these>; make olddefconfig
CONFIG_HUGETLBFS=y
# CONFIG_TRANSPARENT_HUGEPAGE is not set
