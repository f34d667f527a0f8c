# base: make ARCH=x86_64 x86_64_defconfig   (kernel tree 7.2, 7.2.13)
# method seq: scripts/config --file .config <these>; make olddefconfig
