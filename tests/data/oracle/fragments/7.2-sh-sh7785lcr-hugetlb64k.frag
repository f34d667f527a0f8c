# base: make ARCH=sh sh7785lcr_defconfig   (kernel tree 7.2, 7.2.13)
# method seq: scripts/config --file .config <these>; make olddefconfig
CONFIG_HUGETLBFS=y
