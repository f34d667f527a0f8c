#!/usr/bin/env bash
# Two builds of cmalign side by side on the whole-tree check that bench/check-vs-dtc.sh times
# (every arm64 board, 16K pages, an empty cache, all cores), run alternately so that a loaded or
# drifting machine weighs on both alike. Prints each run's wall and CPU time, the medians and
# minima of both, and whether the two JSON outputs are byte-identical (a refactor's must be).
#
#   bench/compare-builds.sh BEFORE_BINARY AFTER_BINARY [KERNEL_TREE] [ROUNDS, default 11]
#
# Build both the way users run it (the README's first command: Release), e.g. a worktree of the
# older commit: git worktree add /tmp/before OLD && cmake -S /tmp/before -B /tmp/before/build
# -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMALIGN_TESTS=OFF && cmake --build /tmp/before/build.
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,11p' "$0" >&2; exit 2; }
before=$1 after=$2
tree=${3:-/opt/cmalign/ksrc/linux-source-6.12}
rounds=${4:-11}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'CONFIG_ARM64=y\nCONFIG_ARM64_16K_PAGES=y\nCONFIG_HUGETLBFS=y\nCONFIG_CMA=y\nCONFIG_DMA_CMA=y\n' \
    >"$work/16k.config"

run() { # NAME BINARY: one cold run, "NAME WALL CPU" appended to the results
    rm -rf "$work/cache" && mkdir "$work/cache"
    /usr/bin/time -f "$1 %e %U %S" -o "$work/time" "$2" check --no-progress --cache-dir "$work/cache" \
        --kernel-tree "$tree" -c "$work/16k.config" --format json -j "$(nproc)" \
        "$tree/arch/arm64/boot/dts" >"$work/$1.json" 2>/dev/null || true
    # (time writes "Command exited with non-zero status 1" first: check exits 1 on findings)
    tail -1 "$work/time" | awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' | tee -a "$work/results"
}
for ((round = 1; round <= rounds; ++round)); do
    run before "$before"
    run after "$after"
done
/usr/bin/python3 - "$work/results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, wall, cpu = line.split()
    runs.setdefault(name, []).append((float(wall), float(cpu)))
for name in ("before", "after"):
    wall, cpu = [r[0] for r in runs[name]], [r[1] for r in runs[name]]
    print(f"{name:6}: wall median {statistics.median(wall):.2f} s (min {min(wall):.2f}), "
          f"CPU median {statistics.median(cpu):.2f} s (min {min(cpu):.2f})")
b = statistics.median(r[0] for r in runs["before"])
a = statistics.median(r[0] for r in runs["after"])
print(f"after / before (wall medians): {a / b:.3f}")
PY
if cmp -s "$work/before.json" "$work/after.json"; then
    echo "outputs: identical"
else
    echo "outputs: differ"
fi
