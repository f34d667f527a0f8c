# base: make ARCH=sh sdk7786_defconfig   (kernel tree 6.12, 6.12.117)
# method seq: scripts/config --file .config <these>; make olddefconfig
