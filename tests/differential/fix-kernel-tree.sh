#!/bin/sh
# `cmalign fix --in-place` on every arm64 board of a kernel tree that fails at 16K and at 64K
# pages, on a COPY of the tree (the tree itself is only read), then proves the result:
#   * `check` is clean (no cma-size-alignment error) for every board that failed;
#   * every changed source line differs from the original only in its numbers;
#   * the DTBs built by cpp+dtc before and after differ only in the edited size properties;
#   * a second run changes nothing (no edit, every byte of the copy identical).
#
#   tests/differential/fix-kernel-tree.sh [KERNEL_TREE] [CMALIGN]
#     KERNEL_TREE  default /opt/cmalign/ksrc/linux-source-6.12
#     CMALIGN      the cmalign binary (default: build/cmalign, else the first build-*/cmalign)
# Environment: WORK=/var/tmp/dir (kept; default a new mktemp dir, removed unless KEEP=1),
# SAMPLE=N (only the first N failing boards of each page size), PAGE_SIZES="16K 64K".
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
tree=${1:-/opt/cmalign/ksrc/linux-source-6.12}
cmalign=${2:-}
if [ -z "$cmalign" ]; then
    for c in "$here"/build/cmalign "$here"/build-*/cmalign; do
        [ -x "$c" ] && { cmalign=$c; break; }
    done
fi
[ -x "${cmalign:-}" ] || { echo "fix-kernel-tree: no cmalign binary (give it as 2nd argument)" >&2; exit 2; }
tree=$(cd "$tree" && pwd)
page_sizes=${PAGE_SIZES:-16K 64K}
py=/usr/bin/python3
config=$here/examples/configs/arm64-16k.config

if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d /var/tmp/cmalign-fix-tree.XXXXXX); fi
cleanup() { [ "${KEEP:-0}" = 1 ] || [ -n "${WORK:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# The parts of a kernel tree that arm64 DTS files read: real copies (no hard links), so nothing
# written in the copy can reach the original.
copy_tree() {
    dst=$1
    mkdir -p "$dst/arch/arm64/boot" "$dst/arch/arm/boot" "$dst/include/uapi/linux" "$dst/scripts/dtc"
    cp -R "$tree/arch/arm64/boot/dts" "$dst/arch/arm64/boot/"
    cp -R "$tree/arch/arm/boot/dts" "$dst/arch/arm/boot/"
    cp -R "$tree/include/dt-bindings" "$dst/include/"
    cp "$tree/include/uapi/linux/input-event-codes.h" "$dst/include/uapi/linux/"
    cp -R "$tree/scripts/dtc/include-prefixes" "$dst/scripts/dtc/"
    cp "$tree/Makefile" "$dst/"
}

# cpp + dtc as scripts/Makefile.lib does, for the boards listed in $2, into $3.
build_dtbs() {
    root=$1 list=$2 out=$3
    mkdir -p "$out"
    xargs -P "$(nproc)" -n 1 sh -c '
        root=$1; out=$2; src=$3
        rel=${src#"$root"/}; name=$(echo "$rel" | tr / _)
        dir=$(dirname "$src")
        cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp \
            -I "$root/scripts/dtc/include-prefixes" -I "$dir" "$src" -o "$out/$name.pp" 2>/dev/null &&
        dtc -I dts -O dtb -q -i "$dir" -o "$out/$name.dtb" "$out/$name.pp" 2>/dev/null ||
            echo "dtc failed: $rel" >&2
        rm -f "$out/$name.pp"
    ' sh "$root" "$out" <"$list"
}

echo "kernel tree: $tree (copied to $work)"
echo "cmalign: $cmalign"
copy_tree "$work/orig"
status=0
for ps in $page_sizes; do
    case $ps in
    16K) sets= ;;
    64K) sets="--set CONFIG_ARM64_16K_PAGES=n --set CONFIG_ARM64_64K_PAGES=y --set CONFIG_ARCH_FORCE_MAX_ORDER=13" ;;
    *) echo "unknown page size $ps" >&2; exit 2 ;;
    esac
    echo "== $ps pages"
    dir=$work/$ps
    rm -rf "$dir"
    cp -R "$work/orig" "$dir"
    dts=$dir/arch/arm64/boot/dts
    # shellcheck disable=SC2086
    "$cmalign" check "$dts" -c "$config" $sets --kernel-tree "$dir" --format json --no-progress \
        >"$dir.check-before.json" || true
    "$py" - "$dir.check-before.json" "$dir.failing" "${SAMPLE:-0}" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
bad = sorted({d["input"] for d in j["diagnostics"]
              if d["severity"] == "error" and d["check"] in ("cma-size-alignment", "cma-base-alignment")})
errs = [d for d in j["diagnostics"] if d["check"] is None and d["severity"] == "error"]
n = int(sys.argv[3])
if n: bad = bad[:n]
open(sys.argv[2], "w").write("".join(b + "\n" for b in bad))
print(f"  boards with reservations: {len({r['input'] for r in j['regions']})}, unreadable: {len(errs)}, "
      f"alignment {j['alignment']['cma_min_alignment_bytes'] >> 20} MiB, failing: {len(bad)}")
EOF
    "$py" -c "import sys; print('  ', open(sys.argv[1]).read().count(chr(10)), 'failing boards to fix')" "$dir.failing"
    [ -s "$dir.failing" ] || continue
    cp -R "$dir" "$dir.before"
    # shellcheck disable=SC2086
    xargs "$cmalign" fix -c "$config" $sets --kernel-tree "$dir" --in-place --format json \
        <"$dir.failing" >"$dir.fix1.json" 2>/dev/null || true
    # shellcheck disable=SC2086
    xargs "$cmalign" check -c "$config" $sets --kernel-tree "$dir" --format json --no-progress \
        <"$dir.failing" >"$dir.check-after.json" || true
    cp -R "$dir" "$dir.after1"
    # shellcheck disable=SC2086
    xargs "$cmalign" fix -c "$config" $sets --kernel-tree "$dir" --in-place --format json \
        <"$dir.failing" >"$dir.fix2.json" 2>/dev/null || true
    second_identical=yes
    diff -r --no-dereference "$dir.after1" "$dir" >/dev/null 2>&1 || second_identical=no

    sed "s|^$dir/|$dir.before/|" "$dir.failing" >"$dir.failing.before"
    build_dtbs "$dir.before" "$dir.failing.before" "$dir.dtb-before"
    build_dtbs "$dir" "$dir.failing" "$dir.dtb-after"

    "$py" - "$dir" "$ps" "$second_identical" <<'EOF' || status=1
import json, os, re, subprocess, sys
import libfdt
d, ps, second_identical = sys.argv[1], sys.argv[2], sys.argv[3]
fix1 = json.load(open(d + ".fix1.json")); fix2 = json.load(open(d + ".fix2.json"))
after = json.load(open(d + ".check-after.json"))
failing = [l.strip() for l in open(d + ".failing") if l.strip()]
ok = True
def fail(msg):
    global ok; ok = False; print("  FAIL:", msg)

edits = fix1["edits"]
files = sorted({os.path.realpath(e["file"]) for e in edits})
unfixable = [x for x in fix1["diagnostics"] if x["severity"] == "error"]
bases = {x["input"] for x in unfixable if x["check"] == "cma-base-alignment"}
refused = {x["input"] for x in unfixable if x["check"] != "cma-base-alignment"}
print(f"  fix: {len(edits)} edits in {len(files)} files for {len(failing)} boards, "
      f"{len(fix1['written'])} files written; {len(refused)} boards refused (the grown pool "
      f"would not fit), {len(bases)} with a misaligned base (reported, never moved)")
for x in unfixable: print("    not fixable:", x["input"].replace(d + "/", ""), "-", x["message"][:220])
left = [x for x in after["diagnostics"] if x["severity"] == "error"]
size_left = [x for x in left if x["check"] == "cma-size-alignment" and x["input"] not in refused]
clean = {b for b in failing} - {x["input"] for x in left}
fixed = set(failing) - refused
print(f"  check after: {len(clean)}/{len(failing)} boards clean; of the {len(fixed)} boards fix "
      f"wrote, {len(fixed & clean)} are clean, {len(size_left)} cma-size-alignment errors left")
for x in left:
    if x["input"] not in refused or x["check"] == "cma-base-alignment":
        print("    left:", x["check"], x["input"].replace(d + "/", ""), x["message"][:150])
if size_left: fail("size errors left on boards fix wrote")
if any(x["input"] in fixed and x["check"] != "cma-base-alignment" for x in left):
    fail("boards fix wrote still have errors")
print(f"  second run: {len(fix2['edits'])} edits, files identical: {second_identical}")
if fix2["edits"] or second_identical != "yes": fail("second run changed something")

# Source: every changed line differs only in its numbers.
number = re.compile(r"\b(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\b")
changed_lines = 0
for f in files:
    old = open(f.replace(d + "/", d + ".before/", 1), "rb").read().split(b"\n")
    new = open(f, "rb").read().split(b"\n")
    if len(old) != len(new): fail(f"{f}: line count changed"); continue
    for a, b in zip(old, new):
        if a == b: continue
        changed_lines += 1
        a, b = a.decode(), b.decode()
        if number.sub("N", a) != number.sub("N", b): fail(f"{f}: not only digits: {a!r} -> {b!r}")
rest = subprocess.run(["diff", "-rq", "--no-dereference", d + ".before", d],
                      capture_output=True, text=True).stdout.split("\n")
other = [l for l in rest if l and not any(l.endswith(" " + f + " differ") for f in files)]
if other: fail(f"files changed that no edit names: {other[:3]}")
print(f"  source: {changed_lines} lines changed in {len(files)} files, each only in its digits; "
      f"no other file differs: {not other}")

# DTBs: same nodes and properties except the edited sizes.
edited = {(e["node"], e["property"]) for e in edits}
def props(path):
    fdt = libfdt.Fdt(open(path, "rb").read())
    out = {}
    def walk(node, p):
        off = fdt.first_property_offset(node, (libfdt.NOTFOUND,))
        while off >= 0:
            prop = fdt.get_property_by_offset(off)
            out[(p, prop.name)] = bytes(prop)
            off = fdt.next_property_offset(off, (libfdt.NOTFOUND,))
        child = fdt.first_subnode(node, (libfdt.NOTFOUND,))
        while child >= 0:
            walk(child, (p.rstrip("/") + "/" + fdt.get_name(child)))
            child = fdt.next_subnode(child, (libfdt.NOTFOUND,))
    walk(0, "/")
    return out, fdt.num_mem_rsv()
dtbs = sorted(os.listdir(d + ".dtb-after")); compared = differing_props = 0; dtb_ok = True
for name in dtbs:
    before = d + ".dtb-before/" + name
    if not os.path.exists(before): fail(f"{name}: no DTB before"); continue
    a, ra = props(before); b, rb = props(d + ".dtb-after/" + name)
    compared += 1
    if set(a) != set(b) or ra != rb:
        dtb_ok = False; fail(f"{name}: node/property set changed"); continue
    for k in [k for k in a if a[k] != b[k]]:
        differing_props += 1
        if k not in edited: dtb_ok = False; fail(f"{name}: {k} changed but was not edited")
print(f"  dtc: {compared}/{len(failing)} boards built before and after with cpp+dtc, "
      f"{differing_props} properties differ, all of them edited sizes: {dtb_ok}")
print("  RESULT:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
EOF
done
exit $status
