# base: make ARCH=powerpc ppc44x_defconfig   (kernel tree 6.1, 6.1.192)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_PPC_4K_PAGES is not set
CONFIG_PPC_64K_PAGES=y
