# base: make ARCH=sh sh7785lcr_defconfig   (kernel tree 5.10, 5.10.223)
# method fresh: make savedefconfig; scripts/config --file defconfig <these>; cp defconfig .config; make olddefconfig
# CONFIG_PAGE_SIZE_4KB is not set
CONFIG_PAGE_SIZE_64KB=y
CONFIG_HUGETLBFS=y
