# base: make ARCH=powerpc ppc64le_defconfig   (kernel tree 6.1, 6.1.192)
# method seq: scripts/config --file .config <these>; make olddefconfig
CONFIG_ARCH_FORCE_MAX_ORDER=7
