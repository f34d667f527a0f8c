# base: make ARCH=powerpc pmac32_defconfig   (kernel tree 6.12, 6.12.117)
# method seq: scripts/config --file .config <these>; make olddefconfig
CONFIG_ARCH_FORCE_MAX_ORDER=13
