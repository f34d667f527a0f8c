# base: make ARCH=sh sh7785lcr_defconfig   (kernel tree 6.12, 6.12.117)
# method seq: scripts/config --file .config <these>; make olddefconfig
CONFIG_HUGETLBFS=y
