#!/bin/sh
# Compile every board (.dts) of one architecture of a kernel tree into DTBs, the way the kernel's
# scripts/Makefile.lib does it (cpp with the DT include prefixes, then dtc), on all cores.
#
#   bench/compile-dtbs.sh KERNEL_TREE OUT_DIR [ARCH]      (ARCH defaults to arm64)
#
# OUT_DIR mirrors arch/ARCH/boot/dts; OUT_DIR/failed.txt lists boards that did not compile.
# The kernel tree is only read. DTC=/path/to/dtc compiles with another dtc (default: dtc on PATH).
set -eu
tree=${1:?usage: compile-dtbs.sh KERNEL_TREE OUT_DIR [ARCH]}
out=${2:?usage: compile-dtbs.sh KERNEL_TREE OUT_DIR [ARCH]}
arch=${3:-arm64}
jobs=${JOBS:-$(nproc)}
dtc=${DTC:-dtc} # e.g. the tree's own scripts/dtc/dtc
export dtc
tree=$(cd "$tree" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
: >"$out/failed.txt"

cd "$tree/arch/$arch/boot/dts"
find . -name '*.dts' | sort | xargs -P "$jobs" -n 1 sh -c '
    tree=$1; out=$2; src=$3
    dir=$(dirname "$src"); base=$(basename "$src" .dts)
    mkdir -p "$out/$dir"
    tmp="$out/$dir/$base.dts.tmp"
    if cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp \
           -I "$tree/scripts/dtc/include-prefixes" -I "$dir" "$src" -o "$tmp" 2>/dev/null &&
       "$dtc" -I dts -O dtb -q -i "$dir" -o "$out/$dir/$base.dtb" "$tmp" 2>/dev/null; then
        rm -f "$tmp"
    else
        rm -f "$tmp" "$out/$dir/$base.dtb"
        echo "$src" >>"$out/failed.txt"
    fi
' sh "$tree" "$out"
n_ok=$(find "$out" -name '*.dtb' | wc -l)
n_fail=$(wc -l <"$out/failed.txt")
echo "compiled $n_ok DTBs, $n_fail failed (see $out/failed.txt)"
