#!/usr/bin/env bash
# How long CI takes, phase by phase: a fresh clone of HEAD runs `.ci/run` (scripts/dev test) and
# the "== phase NAME: N s" lines it prints are listed with the total against the 20-minute goal.
# Packages and kernel trees already installed are reused (as on a CI runner with a warm apt cache,
# they are then quick phases). ccache is bypassed so that every build is a full one.
#   bench/ci-time.sh [--keep]     measure; --keep leaves the clone (its path is printed)
set -euo pipefail
cd "$(dirname "$0")/.."
# .ci/run makes its own clone in an empty directory; this one only fixes what is measured (HEAD).
clone=$(mktemp -d "${TMPDIR:-/tmp}/cmalign-ci-time.XXXXXX")
[[ ${1:-} == --keep ]] || trap 'rm -rf "$clone"' EXIT
git clone -q . "$clone"
log=$clone.log
start=$SECONDS
(cd "$clone" && CCACHE_DISABLE=1 .ci/run) >"$log" 2>&1 || { tail -40 "$log"; echo "ci-time: .ci/run failed (log: $log)" >&2; exit 1; }
total=$((SECONDS - start))
echo "phases of a fresh .ci/run on $(nproc) cores (load at the end: $(cut -d' ' -f1-3 /proc/loadavg)):"
grep -E '^== phase ' "$log" | sed 's/^== phase /  /'
awk -v t="$total" 'BEGIN { printf "  total: %d s (%.1f min), goal 1200 s: ratio %.2f\n", t, t / 60, t / 1200 }'
[[ ${1:-} == --keep ]] && echo "clone: $clone, log: $log"
exit 0
