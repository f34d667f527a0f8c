# base: make ARCH=arm64 defconfig   (kernel tree 7.2, 7.2.13)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_ARM64_4K_PAGES is not set
CONFIG_ARM64_16K_PAGES=y
# CONFIG_ARM64_64K_PAGES is not set
