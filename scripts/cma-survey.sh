#!/usr/bin/env bash
# The issue's real-material figure: of the arm64 boards of a kernel tree that declare a CMA pool,
# how many lose one with 4K/16K/64K pages (arm64 6.12 defconfig alignments 2/32/512 MiB).
# Compiles every board with cpp + dtc (scripts/compile-dtbs.sh, all cores), then runs
# examples/cma_survey on the DTBs and, with --dts, on the same boards' sources through the
# built-in preprocessor and parser; the two lists must agree.
#
#   scripts/cma-survey.sh [KERNEL_TREE] [BUILD_DIR] [--dts]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-/opt/cmalign/ksrc/linux-source-6.12}
build=${2:-$here/build}
survey=$build/examples/example_cma_survey
[ -x "$survey" ] || { echo "build $survey first (ninja -C $build example_cma_survey)" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/var/tmp}/cmalign-survey.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$here/scripts/compile-dtbs.sh" "$tree" "$out/dtb" arm64
"$survey" "$out/dtb" --list | tee "$out/dtb.txt" | grep -v '^  ' || true
if [ "${3:-}" = "--dts" ]; then
    "$survey" --dts "$tree" --list >"$out/dts.txt"
    grep -v '^  ' "$out/dts.txt" || true
    if diff <(grep '^  ' "$out/dtb.txt") <(grep '^  ' "$out/dts.txt") >/dev/null 2>&1; then
        echo "DTS and DTB agree board by board"
    else
        echo "DTS and DTB lists differ:"; diff <(grep '^  ' "$out/dtb.txt") <(grep '^  ' "$out/dts.txt") || true
    fi
fi
