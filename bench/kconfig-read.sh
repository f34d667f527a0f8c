#!/bin/sh
# Times the kconfig fragment reader on every oracle .config and every defconfig / config fragment
# of the Debian kernel trees. Usage: bench/kconfig-read.sh [BUILD_DIR] (a Release build is what
# the figures are about; the library must be built: ninja -C BUILD_DIR cmalign).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
ksrc=${CMALIGN_KERNEL_SRC_DIR:-/opt/cmalign/ksrc}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
c++ -std=c++20 -O2 -DNDEBUG -I"$here/include" "$here/bench/kconfig_read.cpp" \
    "$build/libcmalign.a" -lfmt -lpthread -o "$out/kconfig_read"
"$out/kconfig_read" "$here"/tests/data/oracle/configs/*.config.xz
find "$ksrc"/linux-source-*/arch/*/configs "$ksrc"/linux-source-*/kernel/configs \
    \( -name '*defconfig' -o -name '*.config' \) -type f 2>/dev/null | sort |
    xargs "$out/kconfig_read"
