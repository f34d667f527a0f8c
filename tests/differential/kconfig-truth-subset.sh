#!/usr/bin/env bash
# CI subset of tests/differential/kconfig-truth + tests/differential/kconfig-compare: the kernel's own
# `make ARCH=A NAME` (host tools, out of tree) for a handful of defconfigs of Debian's 6.12 tree
# and one of 6.1, then `cmalign config --kernel-tree T --arch A -c <defconfig> [-c <fragment>]`
# against it (plain mode: >= 98 % of symbols, every deciding symbol).
# Usage: truth-subset.sh CMALIGN KERNEL_SRC_DIR WORK_DIR
set -euo pipefail
cli=$1 ksrc=$2 work=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
tree=$ksrc/linux-source-6.12

missing() { # real material is required in CI: fail there, skip (77) elsewhere
    if [[ -n ${CI:-} ]]; then
        echo "error: $1 (scripts/install-deps --with-kernel-sources; scripts/kernel-sources)" >&2
        exit 1
    fi
    echo "skipped: $1"
    exit 77
}
[[ -f $tree/Makefile ]] || missing "no kernel tree at $tree"
for tool in make gcc flex bison; do
    command -v "$tool" >/dev/null || missing "$tool is not installed"
done

rm -rf "$work"
/usr/bin/python3 "$repo/tests/differential/kconfig-truth" --tree "$tree" --mode host --no-generated \
    --arch arm64 --arch arm --arch mips --arch riscv \
    --only '^(arm64/defconfig|arm64/fragments/16k|arm/multi_v7_defconfig|mips/rs90_defconfig|riscv/defconfig)$' \
    --out "$work/truth" --build "$work/build"
# 6.1's scripts/kconfig differs (choice symbols, SYMBOL_NEED_SET_CHOICE_VALUES, automatic
# submenus inside choices): loongson3_defconfig is where 64BIT, 16K pages and THP hinge on it.
tree61=$ksrc/linux-source-6.1
[[ -f $tree61/Makefile ]] || missing "no kernel tree at $tree61"
/usr/bin/python3 "$repo/tests/differential/kconfig-truth" --tree "$tree61" --mode host --no-generated \
    --no-fragments --arch mips --only '^mips/loongson3_defconfig$' \
    --out "$work/truth" --build "$work/build"
# 5.10 (LTS, `option ...`, gold-linker probe) and 7.2 (`depends on X if Y`, transitional symbols):
# the walkthrough's defconfig + 16K fragment.
for v in 5.10 7.2; do
    [[ -f $ksrc/linux-source-$v/Makefile ]] || missing "no kernel tree at $ksrc/linux-source-$v"
    /usr/bin/python3 "$repo/tests/differential/kconfig-truth" --tree "$ksrc/linux-source-$v" --mode host \
        --no-generated --arch arm64 --only '^arm64/(defconfig|fragments/16k)$' \
        --out "$work/truth" --build "$work/build"
done
n=$(find "$work/truth" -name '*.config' | wc -l)
[[ $n -eq 10 ]] || { echo "error: expected 10 truth configs, got $n" >&2; exit 1; }

# The walkthrough's answers from the kernel's own .config (complete, so exact without evaluating
# Kconfig): sdm845's 16 MiB fastrpc pool is the one error on 16K pages; rs90's reusable pool is
# lost (DMA_CMA not set, DMA_DECLARE_COHERENT=y: rmem_dma_setup() refuses it and the memory is
# freed).
fail() { echo "error: $*" >&2; exit 1; }
rc=0
out=$(cd "$tree" && "$cli" check arch/arm64/boot/dts/qcom/sdm845-db845c.dts \
    -c "$work/truth/6.12/arm64/fragments/16k.config" 2>/dev/null) || rc=$?
[[ $rc -eq 1 ]] || fail "sdm845-db845c on 16K: exit $rc, expected 1"
[[ $(grep -c ': error: ' <<<"$out") -eq 1 ]] || fail "sdm845-db845c on 16K: not exactly one error: $out"
grep -q 'sdm845.dtsi:896:.*\[cma-size-alignment\]' <<<"$out" || fail "no size error at sdm845.dtsi:896: $out"
rc=0
out=$(cd "$tree" && "$cli" check arch/mips/boot/dts/ingenic/rs90.dts \
    -c "$work/truth/6.12/mips/rs90_defconfig.config" 2>/dev/null) || rc=$?
[[ $rc -eq 1 ]] || fail "rs90 with rs90_defconfig: exit $rc, expected 1"
grep -q 'rs90.dts:24:.*compatible matching fail" and frees the memory.*\[cma-disabled\]' <<<"$out" ||
    fail "rs90: no lost-pool error: $out"
echo "walkthrough answers from the kernel's .config: ok"

# Inside the 5.10 and 7.2 trees with no flags: defconfig + 16K fragment evaluated by cmalign gives
# exactly the findings that the .config written by the kernel's make gives.
findings() { grep -E ': (error|warning|note): .*\[' | grep -v '\[kconfig-assumption\]' || true; }
for v in 5.10 7.2; do
    tree_v=$ksrc/linux-source-$v
    rc_make=0 rc_ours=0
    by_make=$(cd "$tree_v" && "$cli" check arch/arm64/boot/dts/qcom/sdm845-db845c.dts \
        -c "$work/truth/$v/arm64/fragments/16k.config" 2>&1) || rc_make=$?
    by_ours=$(cd "$tree_v" && "$cli" check arch/arm64/boot/dts/qcom/sdm845-db845c.dts \
        -c arch/arm64/configs/defconfig -c "$repo/tests/data/kconfig-fragments/arm64/16k.config" 2>&1) ||
        rc_ours=$?
    [[ $rc_make -eq $rc_ours ]] || fail "$v sdm845-db845c: exit $rc_ours, with make's .config $rc_make"
    [[ $rc_ours -le 1 ]] || fail "$v sdm845-db845c: input error: $by_ours"
    [[ "$(findings <<<"$by_make")" == "$(findings <<<"$by_ours")" ]] ||
        fail "$v sdm845-db845c: findings differ from make's .config:"$'\n'"$by_ours"$'\n'"---"$'\n'"$by_make"
    echo "$v walkthrough inside the tree: same findings as make's .config (exit $rc_ours)"
done

# From here on the answers come from cmalign's own Kconfig evaluation.
/usr/bin/python3 "$repo/tests/differential/kconfig-compare" --truth "$work/truth" --cmalign "$cli" --mode plain
