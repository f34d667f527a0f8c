# base: make ARCH=powerpc mpc885_ads_defconfig   (kernel tree 7.2, 7.2.13)
# method seq: scripts/config --file .config <these>; make olddefconfig
