#!/usr/bin/env bash
# Times `cmalign check` over every arm64 board of a kernel tree against the reference pipeline
# (cpp + dtc, exactly as the kernel build runs them) over the same boards, side by side, both on
# all cores, and prints the ratio of each paired round and their median (the goal: 1/30).
# This kind of VM drifts by tens of percent between minutes: compare medians, not single rounds.
# Measure the program the README's first command builds (a Release build, -O3): a RelWithDebInfo
# build (-O2) runs the whole tree about 5 % slower (2 % more instructions).
#
#   bench/check-vs-dtc.sh [KERNEL_TREE] [CMALIGN_BINARY] [ARCH] [ROUNDS, default 3]
set -euo pipefail
tree=${1:-/opt/cmalign/ksrc/linux-source-6.12}
cmalign=${2:-$(dirname "$0")/../build/cmalign}
arch=${3:-arm64}
rounds=${4:-3}
jobs=$(nproc)
dts_dir=$tree/arch/$arch/boot/dts
config=$(mktemp --suffix=.config)
out=$(mktemp -d)
cache=$(mktemp -d) # cold: an empty cache directory (not ~/.cache's entries)
trap 'rm -rf "$config" "$out" "$cache"' EXIT
printf 'CONFIG_ARM64=y\nCONFIG_ARM64_16K_PAGES=y\nCONFIG_HUGETLBFS=y\nCONFIG_CMA=y\nCONFIG_DMA_CMA=y\n' >"$config"

mapfile -t boards < <(find "$dts_dir" -name '*.dts' | sort)
echo "boards: ${#boards[@]} ($arch, $tree), jobs: $jobs"

# The kernel's own rule (scripts/Makefile.lib: cpp with its flags, then dtc), one board per
# process on all cores: bench/compile-dtbs.sh, the same pipeline the CMA survey compiles with.
reference() { JOBS=$jobs "$(dirname "$0")/compile-dtbs.sh" "$tree" "$out/dtb" "$arch" >/dev/null; }

now() { date +%s.%N; }
ratios=()
for ((round = 1; round <= rounds; ++round)); do
    rm -rf "$out/dtb" "$cache" && mkdir -p "$cache"
    t0=$(now); reference; t1=$(now)
    # The reference's 1,118 .dtb files are still being written back: flush them before timing ours.
    sync
    t1b=$(now)
    "$cmalign" check --no-progress --cache-dir "$cache" --kernel-tree "$tree" -c "$config" --format json -j "$jobs" "$dts_dir" \
        >"$out/check.json" || true
    t2=$(now)
    ref=$(echo "$t1 - $t0" | bc -l)
    ours=$(echo "$t2 - $t1b" | bc -l)
    ratio=$(echo "$ours / $ref" | bc -l)
    ratios+=("$ratio")
    printf 'round %d: cpp+dtc %6.2f s, cmalign check %5.2f s, ratio %.3f\n' "$round" "$ref" "$ours" "$ratio"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
printf 'ratio:          %8.3f  (median of %d rounds, cmalign / cpp+dtc; goal <= 0.033, %.1fx faster)\n' \
    "$median" "$rounds" "$(echo "1 / $median" | bc -l)"
/usr/bin/python3 - "$out/check.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
boards = {r["input"] for r in j["regions"] if r["kind"] == "cma"}
bad = {d["input"] for d in j["diagnostics"] if d["severity"] == "error"}
print(f"boards with a CMA pool: {len(boards)}, rejected at 16K pages: {len(bad)}")
PY
