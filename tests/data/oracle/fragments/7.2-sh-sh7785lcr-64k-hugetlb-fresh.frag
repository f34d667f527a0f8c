# base: make ARCH=sh sh7785lcr_defconfig   (kernel tree 7.2, 7.2.13)
# method fresh: make savedefconfig; scripts/config --file defconfig <these>; cp defconfig .config; make olddefconfig
# CONFIG_PAGE_SIZE_4KB is not set
CONFIG_PAGE_SIZE_64KB=y
CONFIG_HUGETLBFS=y
