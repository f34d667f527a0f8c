# base: make ARCH=powerpc mpc885_ads_defconfig   (kernel tree 6.1, 6.1.192)
# method seq: scripts/config --file .config <these>; make olddefconfig
