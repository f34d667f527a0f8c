#!/usr/bin/env bash
# Booted truth for ctest (label boot): the example board on Debian's 6.12 arm64 kernels (4K and
# 16K pages) and two generated layouts on both, in QEMU; a board that hangs Debian's 7.2 armmp
# in early boot (arm-dma-remap) and fix's output of it, which boots. Asserts what each kernel printed against
# check's verdict per node (scripts/boot-truth), and the example board's outcome itself.
# Material: QEMU (scripts/install-deps --with-qemu) and the kernels (scripts/kernel-images
# 6.12-arm64 6.12-arm64-16k 7.2-armmp). Missing material is a visible skip (exit 77), or a failure when
# CI=true or CMALIGN_REQUIRE_MATERIAL=1.
set -euo pipefail
cmalign=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kernels=${CMALIGN_KERNELS:-/opt/cmalign/kernels}

required() { [[ ${CMALIGN_REQUIRE_MATERIAL:-0} == 1 || (${CI:-} != "" && ${CI:-} != false && ${CI:-} != 0) ]]; }
missing() {
    if required; then
        echo "FAIL: missing material: $1 (required in CI)" >&2
        exit 1
    fi
    echo "SKIPPED: missing material: $1" >&2
    exit 77
}
command -v qemu-system-aarch64 >/dev/null || missing "qemu-system-aarch64 (scripts/install-deps --with-qemu)"
for k in 6.12-arm64 6.12-arm64-16k 7.2-armmp; do
    [[ -f $kernels/$k/vmlinuz && -f $kernels/$k/config ]] || missing "$kernels/$k (scripts/kernel-images $k)"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3

# Both pools lost on the 16K kernel, as check says; both created on 4K.
seed=$root/examples/boards/seed-board.dts
status=0
"$cmalign" boot-check "$seed" --kernel "$kernels/6.12-arm64-16k/vmlinuz" --format json \
    >"$work/16k.json" || status=$?
[[ $status == 1 ]] || { echo "FAIL: 16K boot-check exit $status (want 1: pools lost)"; cat "$work/16k.json"; exit 1; }
"$cmalign" boot-check "$seed" --kernel "$kernels/6.12-arm64/vmlinuz" --format json >"$work/4k.json"
$py - "$work/16k.json" "$work/4k.json" <<'PY'
import json, sys
lost, kept = (json.load(open(p)) for p in sys.argv[1:3])
def pools(j):
    return {r["node"]: r for r in j["reservations"] if r["pool"]}
for node in ("/reserved-memory/vdec-pool", "/reserved-memory/camera-pool@50000000"):
    l, k = pools(lost)[node], pools(kept)[node]
    assert l["kernel"] == "rejected" and l["kernel_lost"] and l["check"] == "error" and l["agree"], l
    assert any("incorrect alignment of CMA region" in m["text"] for m in l["kernel_log"]), l
    assert k["kernel"] == "created" and not k["kernel_lost"] and k["check"] != "error" and k["agree"], k
    assert any("created CMA memory pool" in m["text"] for m in k["kernel_log"]), k
assert lost["kernel"]["page_size"] == 16384 and kept["kernel"]["page_size"] == 4096
assert lost["qemu"]["reached_root_mount_panic"] and kept["qemu"]["reached_root_mount_panic"]
print("seed board: 16K both pools rejected, 4K both created (%.1f s, %.1f s)"
      % (lost["qemu"]["seconds"], kept["qemu"]["seconds"]))
PY

# Two generated layouts on both kernels, with fix's output booted again. A boot takes about 10 s;
# the timeout is for a machine loaded many times over (boot-truth's 40 s was too short at a load
# of 10 on two cores).
"$root/scripts/boot-truth" --cmalign "$cmalign" --layouts 2 --kernels 6.12-arm64,6.12-arm64-16k \
    --timeout 150 --fix --out "$work/truth" >"$work/truth.json"
$py - "$work/truth.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["totals"]
assert t["boots"] == 4 and t["boot_failures"] == 0, t
assert t["nodes"] > 0 and t["disagree"] == 0 and t["agree"] == t["nodes"], s["disagreements"]
assert t["explain_mismatch"] == 0, t
assert t["fixed_lost_unflagged"] == 0 and t["fixed_crashes_unflagged"] == 0, t
print("boot-truth: %d boots, %d nodes, all agree; fix's output: %d boots, %d pools, none lost unflagged"
      % (t["boots"], t["nodes"], t["fixed_boots"], t["fixed_pools"]))
PY

# 32-bit arm 7.2: the pool arm-dma-remap names hangs the kernel before its console; boot-check
# gets no answer (exit 2) and says which node check suspects. fix's output (the pool grown to the
# 8 MiB CMA alignment) boots and the pool is created.
armmp=$kernels/7.2-armmp
hang=$here/arm-remap-hang.dts
"$cmalign" check "$hang" -c "$armmp/config" >"$work/hang-check.txt" && { echo "FAIL: check found nothing"; exit 1; }
grep -q "error: .*\[arm-dma-remap\]" "$work/hang-check.txt" || { echo "FAIL: no arm-dma-remap"; cat "$work/hang-check.txt"; exit 1; }
status=0
"$cmalign" boot-check "$hang" --kernel "$armmp/vmlinuz" --stop-early --timeout 20 >"$work/hang.txt" 2>&1 || status=$?
[[ $status == 2 ]] || { echo "FAIL: armmp boot-check exit $status (want 2: no answer)"; cat "$work/hang.txt"; exit 1; }
grep -q "check predicts a hang in early boot on /reserved-memory/camera" "$work/hang.txt" ||
    { echo "FAIL: boot-check does not name the suspect"; cat "$work/hang.txt"; exit 1; }
grep -q "cma: Reserved 128 MiB" "$work/hang.txt" && ! grep -q "Zone ranges" "$work/hang.txt" ||
    { echo "FAIL: not an early hang"; cat "$work/hang.txt"; exit 1; }
"$cmalign" fix "$hang" -c "$armmp/config" -o "$work/fixed.dts" || true
"$cmalign" boot-check "$work/fixed.dts" --kernel "$armmp/vmlinuz" --stop-early --timeout 60 --format json >"$work/fixed.json"
$py - "$work/fixed.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = {x["node"]: x for x in j["reservations"]}["/reserved-memory/camera"]
assert r["kernel"] == "created" and r["check"] == "ok" and r["agree"], r
print("armmp: the 3 MiB pool hangs the kernel as arm-dma-remap says; fix's 8 MiB pool is created (%.1f s)"
      % j["qemu"]["seconds"])
PY
