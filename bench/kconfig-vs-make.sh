#!/bin/sh
# Speed: parse + evaluate a kernel tree's Kconfig from a defconfig (cmalign config --kernel-tree)
# against `make ARCH=A defconfig` with scripts/kconfig/conf already built, side by side.
# Goal: cmalign <= 1/10 of make's time.
# Usage: bench/kconfig-vs-make.sh [BUILD_DIR] [TREE] [ARCH] [DEFCONFIG] [RUNS]
set -eu
build=${1:-build}
tree=${2:-/opt/cmalign/ksrc/linux-source-6.12}
arch=${3:-arm64}
defconfig=${4:-defconfig}
runs=${5:-5}
out=$(mktemp -d /var/tmp/cmalign-bench-kconfig.XXXXXX)
trap 'rm -rf "$out"' EXIT
cfg=$tree/arch/$arch/configs/$defconfig
make -s -C "$tree" O="$out" ARCH="$arch" "$defconfig" >/dev/null 2>&1 # builds conf once
best() { # best wall time of $runs runs of "$@", in seconds
    b=999
    for _ in $(seq "$runs"); do
        s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
        b=$(echo "$e - $s" | bc -l | awk -v b="$b" '{print ($1 < b) ? $1 : b}')
    done
    echo "$b"
}
m=$(best make -s -C "$tree" O="$out" ARCH="$arch" "$defconfig")
c=$(best "$build/cmalign" config --kernel-tree "$tree" --arch "$arch" -c "$cfg")
printf '%-40s %8.3f s\n' "make ARCH=$arch $defconfig (conf built)" "$m" \
       "cmalign config --kernel-tree (no shell)" "$c"
echo "ratio cmalign/make: $(echo "$c / $m" | bc -l | cut -c1-5) (goal <= 0.1)"
