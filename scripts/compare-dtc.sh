#!/bin/sh
# Compares cmalign's resolved device trees with what cpp + dtc build, for every upstream board
# of the kernel tree (arch/{arm64,arm,riscv}/boot/dts by default), using all cores.
# Prints, per arch, N/M boards equal (our parser on cpp's output, and the built-in
# preprocessor), the first differences, and the time per board of cpp+dtc against ours.
#
#   scripts/compare-dtc.sh [BUILD_DIR] [ARCHES]      e.g. scripts/compare-dtc.sh build arm64,riscv
# Environment: JOBS (default: nproc), SOURCE=cpp|builtin|both (default both).
# The kernel tree is the one the tests were configured with (CMALIGN_KERNEL_SRC_DIR,
# default /opt/cmalign/ksrc/linux-source-6.12). Use a Release build for meaningful timings.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
arches=${2:-all}
test_dt=$build/tests/test_dt
if [ ! -x "$test_dt" ]; then
    echo "compare-dtc: $test_dt not found; build it first: ninja -C $build test_dt" >&2
    exit 2
fi
CMALIGN_DTC_COMPARE=$arches CMALIGN_DTC_JOBS=${JOBS:-$(nproc)} CMALIGN_DTC_SOURCE=${SOURCE:-both} \
    exec "$test_dt" --test-case='dts vs dtc: every board*' --no-version
