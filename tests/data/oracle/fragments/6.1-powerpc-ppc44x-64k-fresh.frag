# base: make ARCH=powerpc ppc44x_defconfig   (kernel tree 6.1, 6.1.192)
# method fresh: make savedefconfig; scripts/config --file defconfig <these>; cp defconfig .config; make olddefconfig
# CONFIG_PPC_4K_PAGES is not set
CONFIG_PPC_64K_PAGES=y
