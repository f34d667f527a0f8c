# base: make ARCH=arm64 defconfig   (kernel tree 5.10, 5.10.223)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_ARM64_4K_PAGES is not set
CONFIG_ARM64_16K_PAGES=y
# CONFIG_ARM64_64K_PAGES is not set
