# base: make ARCH=sh sh7785lcr_defconfig   (kernel tree 6.1, 6.1.192)
# method seq: scripts/config --file .config <these>; make olddefconfig
CONFIG_HUGETLBFS=y
