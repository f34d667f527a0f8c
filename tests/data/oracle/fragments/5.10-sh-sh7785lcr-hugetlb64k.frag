# base: make ARCH=sh sh7785lcr_defconfig   (kernel tree 5.10, 5.10.223)
# method seq: scripts/config --file .config <these>; make olddefconfig
CONFIG_HUGETLBFS=y
