# base: make ARCH=i386 i386_defconfig   (kernel tree 5.10, 5.10.223)
# method seq: scripts/config --file .config <these>; make olddefconfig
# CONFIG_HIGHMEM4G is not set
CONFIG_HIGHMEM64G=y
CONFIG_X86_PAE=y
CONFIG_HUGETLBFS=y
