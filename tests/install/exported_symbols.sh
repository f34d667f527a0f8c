#!/usr/bin/env bash
# What a shared libcmalign exports, through cmake/cmalign.map: the static archive (PIC) linked
# whole into a shared object with the version script and the SONAME a BUILD_SHARED_LIBS build
# uses, then its dynamic symbols listed. Every one must be the C API (cmalign_*) or in namespace
# cmalign; every C API function of cmalign.h must be there; the C and C++ consumers link.
# Usage: exported_symbols.sh LIBCMALIGN_A SOURCE_DIR GENERATED_INCLUDE_DIR
set -euo pipefail
archive=$1 source=$2 generated=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/cmalign-symbols.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

c++ -shared -o "$work/libcmalign.so" -Wl,--whole-archive "$archive" -Wl,--no-whole-archive \
    -Wl,--version-script="$source/cmake/cmalign.map" -Wl,-soname,libcmalign.so.0.1 -lfmt -lfdt -lz -llzma -lzstd -pthread
nm -D --defined-only -C "$work/libcmalign.so" | awk '{ $1 = ""; $2 = ""; sub(/^ +/, ""); print }' \
    >"$work/symbols"
total=$(wc -l <"$work/symbols")
echo "exported: $total symbols"
others=$(grep -v -E '^(cmalign_|cmalign::|typeinfo (name )?for cmalign::|vtable for cmalign::|CMALIGN_0\.1$)' \
    "$work/symbols" || true)
[[ -z $others ]] || fail "exported outside the API: $(head -5 <<<"$others")"
for f in $(grep -o 'cmalign_[a-z_]*(' "$source/include/cmalign/cmalign.h" | tr -d '(' | sort -u); do
    grep -q "^$f@@CMALIGN_0.1$" "$work/symbols" || fail "C API function not exported: $f"
done
[[ $(readelf -d "$work/libcmalign.so" | grep -o 'Library soname: \[[^]]*\]') == *libcmalign.so.0.1* ]] ||
    fail "no SONAME"
# Programs built against the installed headers link against it.
cc -std=c11 -I"$source/include" "$source/examples/consumer/bsp_check.c" -o "$work/c" \
    -L"$work" -lcmalign || fail "the C consumer does not link"
c++ -std=c++20 -I"$source/include" -I"$generated" "$source/examples/consumer/bsp_check.cpp" \
    -o "$work/cpp" -L"$work" -lcmalign || fail "the C++ consumer does not link"
echo "exported symbols: C API and namespace cmalign only ($total)"
