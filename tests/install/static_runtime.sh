#!/usr/bin/env bash
# The program's start (CMakeLists.txt, CMALIGN_STATIC_RUNTIME): it must load no C++ runtime, no
# libfmt and none of the libraries it links as archives, and still run. A cached check is a few
# milliseconds, and each shared library added back costs its loading on every run.
# Usage: static_runtime.sh CMALIGN_PROGRAM
set -euo pipefail
program=$1
needed=$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(tr '\n' ' ' <<<"$needed")"
[[ -n $needed ]] || { echo "FAIL: no NEEDED entries read from $program" >&2; exit 1; }
loaded=$(grep -E '^lib(stdc\+\+|gcc_s|fmt|fdt|z|lzma|zstd)\.so' <<<"$needed" || true)
[[ -z $loaded ]] || { echo "FAIL: the program loads $(tr '\n' ' ' <<<"$loaded")" >&2; exit 1; }
# The runtime and fmt's compiled part work from inside the program: --version, and an input
# error's diagnostic (formatted with fmt) with exit 2.
version=$("$program" --version)
[[ $version == "cmalign "* ]] || { echo "FAIL: --version printed '$version'" >&2; exit 1; }
status=0
err=$("$program" check --arch arm64 /nonexistent/board.dts 2>&1 >/dev/null) || status=$?
[[ $status == 2 && $err == *"/nonexistent/board.dts: error: no such file"* ]] ||
    { echo "FAIL: an input error gave exit $status and '$err'" >&2; exit 1; }
echo "ok: no shared C++, fmt, fdt or compression library; --version and an input error work"
