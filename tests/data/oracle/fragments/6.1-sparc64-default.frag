# base: make ARCH=sparc64 sparc64_defconfig   (kernel tree 6.1, 6.1.192)
# method seq: scripts/config --file .config <these>; make olddefconfig
