#!/bin/sh
# Compares cmalign's resolved device trees with what cpp + dtc build, for every upstream board and
# overlay of the kernel tree (arch/{arm64,arm,riscv}/boot/dts/**/*.dts{,o} by default), and every
# composite DTB of the kernel's Makefiles (base + overlays) with what fdtoverlay builds, using all
# cores. Prints, per arch, N/M boards equal (our parser on cpp's output, and the built-in
# preprocessor), the first differences, what we say where dtc fails, and the wall and CPU time per
# board of cpp+dtc against ours.
#
#   tests/differential/compare-dtc.sh [BUILD_DIR] [ARCHES]      e.g. tests/differential/compare-dtc.sh build arm64,riscv
#
# Environment:
#   JOBS=N                  parallel jobs (default: nproc)
#   SOURCE=cpp|builtin|both what to compare (default both)
#   DTC=/path/to/dtc        the dtc to compare with (default: dtc on PATH)
#   FDTOVERLAY=/path        the fdtoverlay to compare with (default: fdtoverlay on PATH)
#   KERNEL_DTC=1            build the kernel tree's own scripts/dtc and fdtoverlay (needs flex,
#                           bison, gcc) into a temporary directory and compare with them: dtc
#                           accepts label-relative references &{label/path}, which the kernel
#                           uses and dtc 1.6 rejects; fdtoverlay is the one Kbuild runs
#   KTREE=linux-source-7.2  the tree under CMALIGN_KERNEL_SRC_DIR to compare (default
#                           linux-source-6.12); with KERNEL_DTC=1 its own scripts/dtc is built
# The kernel trees are under the directory the tests were configured with
# (CMALIGN_KERNEL_SRC_DIR, default /opt/cmalign/ksrc). Use a Release build for meaningful timings.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
arches=${2:-all}
test_dt=$build/tests/test_dt
if [ ! -x "$test_dt" ]; then
    echo "compare-dtc: $test_dt not found; build it first: ninja -C $build test_dt" >&2
    exit 2
fi
dtc=${DTC:-dtc}
tmp=
if [ "${KERNEL_DTC:-0}" = 1 ]; then
    ksrc=$(sed -n 's/^CMALIGN_KERNEL_SRC_DIR:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
    src=${ksrc:-/opt/cmalign/ksrc}/${KTREE:-linux-source-6.12}/scripts/dtc
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    cp -r "$src/." "$tmp/"
    (cd "$tmp" &&
        flex -o dtc-lexer.lex.c dtc-lexer.l &&
        bison -d -o dtc-parser.tab.c dtc-parser.y &&
        gcc -O2 -I. -Ilibfdt -DNO_YAML -o dtc dtc.c flattree.c fstree.c data.c livetree.c \
            treesource.c srcpos.c checks.c util.c dtc-lexer.lex.c dtc-parser.tab.c \
            libfdt/fdt.c libfdt/fdt_ro.c libfdt/fdt_wip.c libfdt/fdt_sw.c libfdt/fdt_rw.c \
            libfdt/fdt_strerror.c libfdt/fdt_empty_tree.c libfdt/fdt_addresses.c \
            libfdt/fdt_overlay.c &&
        if [ -f fdtoverlay.c ]; then # not in 5.10's scripts/dtc
            gcc -O2 -I. -Ilibfdt -o fdtoverlay fdtoverlay.c util.c libfdt/fdt.c libfdt/fdt_ro.c \
                libfdt/fdt_wip.c libfdt/fdt_sw.c libfdt/fdt_rw.c libfdt/fdt_strerror.c \
                libfdt/fdt_empty_tree.c libfdt/fdt_addresses.c libfdt/fdt_overlay.c
        fi) >/dev/null
    dtc=$tmp/dtc
    if [ -x "$tmp/fdtoverlay" ]; then
        FDTOVERLAY=$tmp/fdtoverlay
    else
        echo "compare-dtc: the tree has no scripts/dtc/fdtoverlay.c; using ${FDTOVERLAY:-fdtoverlay}"
    fi
    echo "compare-dtc: using $("$dtc" --version)"
fi
CMALIGN_DTC_TREE=${KTREE:-linux-source-6.12} CMALIGN_DTC_COMPARE=$arches CMALIGN_DTC_JOBS=${JOBS:-$(nproc)} CMALIGN_DTC_SOURCE=${SOURCE:-both} \
    CMALIGN_DTC=$dtc CMALIGN_FDTOVERLAY=${FDTOVERLAY:-fdtoverlay} "$test_dt" \
    --test-case='dts vs dtc: every board*,overlays vs fdtoverlay: every composite*' --no-version
