#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds and runs examples/consumer against it:
# C++ and C through find_package(cmalign), C through pkg-config alone, Python from the prefix's
# site-packages; also checks the man page and the bash completion that were installed.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR PYTHON_INSTALL_DIR(relative to the prefix)
set -euo pipefail
build=$1 source=$2 pydir=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/cmalign-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
repo=$source/examples/board-repo

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect CODE COMMAND...: runs it, output in $out, fails unless it exits with CODE.
expect() {
    local want=$1 code=0
    shift
    out=$("$@" 2>&1) || code=$?
    echo "\$ $*"
    echo "$out"
    [[ $code == "$want" ]] || fail "exit $code, expected $want: $*"
}

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/cmalign include/cmalign/cmalign.h include/cmalign/api.hpp include/cmalign/version.hpp \
    share/man/man1/cmalign.1 share/bash-completion/completions/cmalign \
    share/zsh/vendor-completions/_cmalign share/fish/vendor_completions.d/cmalign.fish \
    share/doc/cmalign/cli.md "$pydir/cmalign/__init__.py" "$pydir/cmalign/__init__.pyi"; do
    [[ -e $prefix/$f ]] || fail "not installed: $f"
done
# Private headers stay private.
for f in dt/dts.hpp dt/preprocess.hpp kernel/rules.hpp run_inputs.hpp; do
    [[ ! -e $prefix/include/cmalign/$f ]] || fail "private header installed: $f"
done
libdir=$(dirname "$(find "$prefix" -name cmalign.pc)")
[[ -n $libdir ]] || fail "cmalign.pc not installed"
ls "$libdir"/../libcmalign.* >/dev/null || fail "libcmalign not installed"

# JSON is a format of the C API, Python and the program: no installed header uses a JSON
# library's types (or includes one), so C++ consumers need no JSON package.
if grep -rln 'nlohmann' "$prefix/include/cmalign"; then fail "an installed header names nlohmann"; fi
packages=$(find "$prefix" -name 'cmalignConfig.cmake' -o -name 'cmalign*.pc')
[[ $(wc -l <<<"$packages") -eq 3 ]] || fail "expected cmalignConfig.cmake and two .pc files: $packages"
if grep -l 'nlohmann' $packages; then fail "the CMake package or a .pc file asks for nlohmann_json"; fi

# The installed program runs and knows its manual.
expect 0 "$prefix/bin/cmalign" --version
grep -q '^\.SH "EXIT STATUS"' "$prefix/share/man/man1/cmalign.1" || fail "man page: no EXIT STATUS"
grep -q '^\.SH EXAMPLES' "$prefix/share/man/man1/cmalign.1" || fail "man page: no EXAMPLES"
words=$(bash -c 'source "$1"; COMP_WORDS=(cmalign ch); COMP_CWORD=1; _cmalign; echo "${COMPREPLY[*]}"' \
    _ "$prefix/share/bash-completion/completions/cmalign")
[[ $words == check ]] || fail "bash completion of 'ch': '$words'"

# C++ and C through find_package(cmalign).
cmake -S "$source/examples/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
cd "$repo"
expect 0 "$work/consumer/bsp_check_cpp" -I include configs/acme_defconfig -- boards
[[ $out == *"CMA alignment 2097152 bytes"* && $out == *"0 of 3 boards"* ]] || fail "C++ 4K"
expect 1 "$work/consumer/bsp_check_cpp" -I include configs/acme_defconfig configs/16k.config -- boards
[[ $out == *"CMA alignment 33554432 bytes"* && $out == *"2 of 3 boards"* ]] || fail "C++ 16K"
[[ $out == *"acme-soc.dtsi:"*"[cma-size-alignment]"* ]] || fail "C++ 16K: no located finding"
request='{"files":["boards"],"include_dirs":["include"],"configs":["configs/acme_defconfig","configs/16k.config"],"kernel_version":"6.12"}'
expect 1 "$work/consumer/bsp_check_c" "$request"
[[ $out == *"CMA alignment 33554432 bytes"* ]] || fail "C (find_package) 16K"
expect 2 "$work/consumer/bsp_check_c" '{"files":["boards/missing.dts"],"configs":["configs/acme_defconfig"]}'
[[ $out == *"boards/missing.dts"* ]] || fail "C: bad input not named"

# A C-only CMake project (no C++ compiler enabled): the target brings the C++ runtime.
cmake -S "$source/tests/install/c_only" -B "$work/c_only" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/c_only" >/dev/null || fail "C-only CMake consumer does not build"
for program in m z; do
    expect 1 "$work/c_only/$program" "$request"
    [[ $out == *"CMA alignment 33554432 bytes"* ]] || fail "C-only CMake consumer '$program' 16K"
done
# What the C link needs from libm (an optimised build calls log2 there; -O1 may fold it away).
echo "libm symbols the static library calls: $(nm "$libdir"/../libcmalign.a 2>/dev/null |
    awk '$1 == "U" && $2 ~ /^(log2|pow|exp|sqrt|floor|ceil|round)$/ {print $2}' | sort -u | tr '\n' ' ')"

# C through pkg-config alone, with no other .pc file visible (no nlohmann_json.pc: the C API
# needs none); the C++ side through cmalign-cxx.pc.
cc -std=c11 -Wall -Werror -o "$work/bsp_check_pc" "$source/examples/consumer/bsp_check.c" \
    $(PKG_CONFIG_LIBDIR=$libdir pkg-config --cflags --libs cmalign) ||
    fail "pkg-config C consumer without nlohmann_json.pc"
export PKG_CONFIG_PATH=$libdir
pkg-config --exists cmalign-cxx || fail "cmalign-cxx.pc"
[[ $(pkg-config --cflags cmalign-cxx) == *"-std=c++20"* ]] || fail "cmalign-cxx.pc: no -std=c++20"
expect 0 "$work/bsp_check_pc" '{"files":["boards"],"include_dirs":["include"],"configs":["configs/acme_defconfig"],"kernel_version":"6.12"}'
[[ $out == *"CMA alignment 2097152 bytes, 0 error(s)"* ]] || fail "C (pkg-config) 4K"
[[ $(pkg-config --modversion cmalign) == "$("$prefix/bin/cmalign" --version | cut -d' ' -f2)" ]] ||
    fail "pkg-config version differs from the program's"

# Python from the prefix, with nothing of the build tree on the path.
export PYTHONPATH=$prefix/$pydir
(cd / && /usr/bin/python3 -c 'import cmalign, sys; assert cmalign.__file__.startswith(sys.argv[1]), cmalign.__file__' "$prefix") ||
    fail "python imports cmalign from elsewhere"
expect 1 /usr/bin/python3 "$source/examples/consumer/bsp_check.py" -I include configs/acme_defconfig configs/16k.config -- boards/acme-evk.dts
[[ $out == *"CMA alignment 33554432 bytes, 2 error(s)"* ]] || fail "Python 16K"
[[ $out == *"fix would write 0x2000000 for 0x400000"* ]] || fail "Python: no fix plan"
echo "install test: all consumers passed"
