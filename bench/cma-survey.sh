#!/usr/bin/env bash
# A real-material figure: of the boards of a kernel tree that declare a CMA pool, how
# many lose one with the defconfig's alignment at each page size (arm64 6.12/7.2: 4K/16K/64K →
# 2/32/512 MiB; 5.10: 4/32/512 MiB; arm multi_v7 and riscv: 4K only).
# Compiles every board with cpp + dtc (bench/compile-dtbs.sh, all cores), then runs
# examples/cma_survey on the DTBs and, with --dts, on the same boards' sources through the
# built-in preprocessor and parser; the two lists must agree.
#
#   bench/cma-survey.sh [KERNEL_TREE] [BUILD_DIR] [--dts]
#
# Environment: ARCH=arm64|arm|riscv (default arm64); KERNEL=5.10|6.1|6.12|7.2 (default: from the
# tree's name linux-source-K); DTC=/path/to/dtc (default dtc on PATH; e.g. the tree's own).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-/opt/cmalign/ksrc/linux-source-6.12}
build=${2:-$here/build}
survey=$build/examples/example_cma_survey
arch=${ARCH:-arm64}
kernel=${KERNEL:-$(basename "$tree" | sed -n 's/^linux-source-//p')}
kernel=${kernel:-6.12}
[ -x "$survey" ] || { echo "build $survey first (ninja -C $build example_cma_survey)" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/var/tmp}/cmalign-survey.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$here/bench/compile-dtbs.sh" "$tree" "$out/dtb" "$arch"
"$survey" "$out/dtb" --list --kernel "$kernel" --arch "$arch" | tee "$out/dtb.txt" | grep -v '^  ' || true
if [ "${3:-}" = "--dts" ]; then
    "$survey" --dts "$tree" --list --kernel "$kernel" --arch "$arch" >"$out/dts.txt"
    grep -v '^  ' "$out/dts.txt" || true
    if diff <(grep '^  ' "$out/dtb.txt") <(grep '^  ' "$out/dts.txt") >/dev/null 2>&1; then
        echo "DTS and DTB agree board by board"
    else
        echo "DTS and DTB lists differ:"; diff <(grep '^  ' "$out/dtb.txt") <(grep '^  ' "$out/dts.txt") || true
    fi
fi
