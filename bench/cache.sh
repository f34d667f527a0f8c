#!/usr/bin/env bash
# The on-disk cache's fast paths against the reference tools, paired runs side by side (median
# of N rounds, each round runs every contender once, in turn):
#   1. one board inside the kernel tree with a full .config: cpp + dtc on that board, cmalign
#      with --no-cache, with a cold cache (emptied before each run) and with a warm cache; and
#      the floor under the warm run: bench/stat_floor.cpp, a process that only stat(2)s each
#      file the warm run's answer names, timed right after a cold run as the warm run is, and
#      the same stats one after another inside a running process;
#   2. --affected-by one .dtsi over the arch's boards: warm cache against the whole check;
#   then bench/check-vs-dtc.sh (the whole tree against cpp + dtc, no cache) and
#   bench/kconfig-vs-make.sh (config of a defconfig against make) when --all is given.
#
#   bench/cache.sh [--all] [KERNEL_TREE] [CMALIGN_BINARY] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
all=0
[[ ${1:-} == --all ]] && { all=1; shift; }
tree=$(realpath "${1:-/opt/cmalign/ksrc/linux-source-6.12}")
cmalign=$(realpath "${2:-$here/../build/cmalign}")
rounds=${3:-7}
board=arch/arm64/boot/dts/qcom/sdm845-db845c.dts
dtsi=arch/arm64/boot/dts/qcom/sdm845.dtsi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$tree"
"$cmalign" config --no-cache --kernel-tree . --arch arm64 -c arch/arm64/configs/defconfig \
    >"$work/full.config" 2>/dev/null

seconds() { # command...: wall time of one run in microseconds, output discarded
    # bash's own clock: two `date` processes around a 5 ms run added 3-5 ms to it.
    local t0=${EPOCHREALTIME/./} t1
    "$@" >/dev/null 2>&1 || true
    t1=${EPOCHREALTIME/./}
    echo $((t1 - t0))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] / 1e6 }'; }

reference() {
    cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp -I scripts/dtc/include-prefixes \
        -I "$(dirname "$board")" "$board" 2>/dev/null | dtc -I dts -O dtb -q -o /dev/null -
}
check() { "$cmalign" check --no-progress --kernel-tree . -c "$work/full.config" "$@"; }
cold() { rm -rf "$work/cold"; check --cache-dir "$work/cold" "$board"; }
warm() { check --cache-dir "$work/warm" "$board"; }
warm >/dev/null 2>&1 || true # fills the warm cache once
answer=$(grep -l '^cmalign-answer' "$work"/warm/answer-* 2>/dev/null | head -1 || true)
[[ -n $answer ]] || { echo "cache.sh: the warm run kept no answer" >&2; exit 1; }
grep -P '^file\t' "$answer" | cut -f2 >"$work/answer-files"
c++ -std=c++20 -O2 "$here/stat_floor.cpp" -pthread -o "$work/stat_floor"
"$work/stat_floor" "$work/answer-files" || { echo "cache.sh: the answer names a missing file" >&2; exit 1; }
for _ in $(seq "$rounds"); do
    echo "ref $(seconds reference)"
    echo "nocache $(seconds check --no-cache "$board")"
    echo "cold $(seconds cold)"
    echo "warm $(seconds warm)"
    echo "true $(seconds /bin/true)"
    cold >/dev/null 2>&1 || true # untimed: puts the floor where the warm run is, after a cold run
    echo "floor $(seconds "$work/stat_floor" "$work/answer-files")"
done >"$work/one"
get() { awk -v k="$1" '$1 == k { print $2 }' "$work/one" | median; }
ref=$(get ref) nocache=$(get nocache) coldt=$(get cold) warmt=$(get warm) truet=$(get true)
floor=$(get floor)
echo "1. one board ($board) in $(basename "$tree"), full .config, median of $rounds paired rounds:"
awk -v r="$ref" -v n="$nocache" -v c="$coldt" -v w="$warmt" -v t="$truet" -v f="$floor" \
    -v files="$(wc -l <"$work/answer-files")" 'BEGIN {
    printf "   cpp + dtc            %7.3f s\n", r
    printf "   cmalign --no-cache   %7.3f s  ratio %.2f\n", n, n / r
    printf "   cmalign cold cache   %7.3f s  ratio %.2f\n", c, c / r
    printf "   cmalign warm cache   %7.3f s  ratio %.3f  (goal <= 0.100)\n", w, w / r
    printf "   floor: stat(2) only  %7.3f s  ratio %.3f  (bench/stat_floor.cpp: a process that\n", f, f / r
    printf "                                  stats the %d files the answer names on as many\n", files
    printf "                                  threads, timed after a cold run as warm is)\n"
    printf "   /bin/true            %7.3f s  (what starting a process from this script costs;\n", t
    printf "                                  hyperfine -N starts one in less)\n" }'

# The same stats one after another inside a process that is already running (Debian's python3):
# what they cost without a process start or threads.
stat_only=$(/usr/bin/python3 -c '
import os, sys, time
paths = open(sys.argv[1]).read().splitlines()
times = []
for _ in range(15):
    t0 = time.perf_counter()
    for p in paths:
        os.stat(p)
    times.append(time.perf_counter() - t0)
print(len(paths), sorted(times)[7])' "$work/answer-files")
awk -v r="$ref" -v f="${stat_only#* }" -v n="${stat_only%% *}" 'BEGIN {
    printf "   the same stats in a running process, one thread: %.4f s  ratio %.3f\n", f, f / r }'

dts_dir=arch/arm64/boot/dts
affected() { check --cache-dir "$work/warm" -j "$(nproc)" "$dts_dir" --affected-by "$dtsi" --; }
affected >"$work/affected.txt" 2>&1 || true # fills the include graphs once
# What a pre-merge hook meets: the .dtsi was just edited, so the kept graphs of the boards that
# include it are stale and those boards are preprocessed again. Its modification time is moved
# (the bytes stay) and put back when the script ends.
touch -r "$dtsi" "$work/dtsi-time"
trap 'touch -r "$work/dtsi-time" "$dtsi"; rm -rf "$work"' EXIT
edited() { touch "$dtsi" && affected; }
for _ in $(seq "$rounds"); do
    echo "affected $(seconds affected)"
    echo "whole $(seconds check --no-cache -j "$(nproc)" "$dts_dir")"
done >"$work/two"
# After the rounds above: an edit leaves the graphs it rewrites "racy" for two seconds (see
# docs/cache.md), which would slow the next unchanged round.
for _ in $(seq "$rounds"); do
    echo "edited $(seconds edited)"
done >>"$work/two"
a=$(awk '$1 == "affected" { print $2 }' "$work/two" | median)
e=$(awk '$1 == "edited" { print $2 }' "$work/two" | median)
w=$(awk '$1 == "whole" { print $2 }' "$work/two" | median)
boards=$(grep -oE '[0-9]+ boards? checked' "$work/affected.txt" | grep -oE '^[0-9]+' | head -1)
echo "2. --affected-by $dtsi over $dts_dir ($boards boards affected), warm cache:"
awk -v a="$a" -v e="$e" -v w="$w" -v b="$boards" 'BEGIN {
    g = 0.1 + 0.002 * b
    printf "   whole check (no cache)       %7.3f s\n", w
    printf "   --affected-by, warm          %7.3f s  goal <= %.3f s (0.1 s + 2 ms per affected board)\n", a, g
    printf "   --affected-by, .dtsi edited  %7.3f s  goal <= %.3f s (its boards preprocessed again)\n", e, g }'

if ((all)); then
    echo "3. the whole tree against cpp + dtc (bench/check-vs-dtc.sh):"
    "$here/check-vs-dtc.sh" "$tree" "$cmalign"
    echo "4. config of the arm64 defconfig against make (bench/kconfig-vs-make.sh):"
    "$here/kconfig-vs-make.sh" "$(dirname "$cmalign")" "$tree" || true
fi
