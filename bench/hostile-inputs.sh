#!/usr/bin/env bash
# Hostile inputs, timed: each must end (a located error or the right answer) within two
# seconds. The reference tools (cpp + dtc for the DTS inputs) run on the same
# files side by side; their time and the ratio are printed, with what each tool answered.
#
#   bench/hostile-inputs.sh [CMALIGN_BINARY]
set -uo pipefail
cmalign=${1:-$(dirname "$0")/../build/cmalign}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work" <<'PY'
import os, sys
w = sys.argv[1]
def board(prelude, size):
    return (prelude + '/dts-v1/;\n/ {\n#address-cells = <2>;\n#size-cells = <2>;\n'
            'reserved-memory {\n#address-cells = <2>;\n#size-cells = <2>;\nranges;\n'
            'pool@50000000 { compatible = "shared-dma-pool"; reusable;\n'
            'reg = <0 0x50000000 0 (' + size + ')>; };\n};\n};\n')
n = 20000
open(f"{w}/deep.dts", "w").write("/dts-v1/;\n/ {\n" + "".join(f"n{i} {{\n" for i in range(n)) + "};\n" * n + "};\n")
ones = " + 1" * ((1 << 20) // 4)
open(f"{w}/long-line.dts", "w").write(board("", "0x400000" + ones + f" - {len(ones) // 4}"))
# Joined once: growing one string by += copies it whole on each line with this Python (minutes).
lines, size, i = ["#define M0 1\n"], 13, 1
while size < 10_000_000:
    lines.append(f"#define M{i} (M{i-1} + M{i-1})\n"); size += len(lines[-1]); i += 1
open(f"{w}/defines.dts", "w").write(board("".join(lines), f"M{i-1}"))
os.makedirs(f"{w}/ktree/arch/x86")
open(f"{w}/ktree/Makefile", "w").write("VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\n")
open(f"{w}/ktree/Kconfig", "w").write('source "arch/x86/Kconfig"\n')
open(f"{w}/ktree/arch/x86/Kconfig", "w").write('config X86\n\tdef_bool y\nsource "Kconfig"\n')
open(f"{w}/ktree/my.config", "w").write("CONFIG_X86=y\n")
PY
now() { date +%s.%N; }
run() { # label, command...: prints seconds, exit status and the first error line
    local label=$1; shift
    local t0 t1 status
    t0=$(now); "$@" >"$work/out" 2>"$work/err"; status=$?; t1=$(now)
    printf '%-28s %6.3f s  exit %-3s %s\n' "$label" "$(echo "$t1 - $t0" | bc)" "$status" \
        "$(grep -m1 -o 'error: .*' "$work/err" | cut -c1-90)"
    echo "$t1 - $t0" | bc >"$work/last"
}
dtc_ref() { cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp "$1" 2>/dev/null | dtc -q -I dts -O dtb -o /dev/null -; }
for input in deep long-line defines; do
    run "cmalign $input.dts" "$cmalign" check --arch arm64 --kernel-version 6.12 "$work/$input.dts"
    ours=$(cat "$work/last")
    run "cpp+dtc $input.dts" dtc_ref "$work/$input.dts"
    theirs=$(cat "$work/last")
    printf '%-28s %6.3f\n' "ratio cmalign/(cpp+dtc)" "$(echo "scale=3; $ours / $theirs" | bc)"
done
run "cmalign Kconfig source loop" "$cmalign" config --arch x86_64 --kernel-tree "$work/ktree" -c "$work/ktree/my.config"
