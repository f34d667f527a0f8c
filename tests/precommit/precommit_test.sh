#!/usr/bin/env bash
# The hook of .pre-commit-hooks.yaml, run by pre-commit itself on a throw-away board repository
# (a copy of examples/board-repo), offline: the hooks repository is a local git repository made
# from this checkout's .pre-commit-hooks.yaml, and the hook runs the built cmalign.
# Usage: precommit_test.sh CMALIGN_PROGRAM SOURCE_DIR
set -euo pipefail
cli=$1 source=$2
command -v pre-commit >/dev/null || { echo "FAIL: pre-commit is not installed (scripts/install-deps)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cmalign-precommit-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME=$work/cache HOME=$work/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME" "$work/bin"
ln -s "$(realpath "$cli")" "$work/bin/cmalign"
export PATH=$work/bin:$PATH
git config --global user.email test@example.org
git config --global user.name test
git config --global init.defaultBranch main
git config --global protocol.file.allow always

fail() { echo "FAIL: $*" >&2; exit 1; }

# The hooks repository: exactly the .pre-commit-hooks.yaml of this checkout.
hooks=$work/hooks
mkdir "$hooks"
cp "$source/.pre-commit-hooks.yaml" "$hooks/"
git -C "$hooks" init -q
git -C "$hooks" add . && git -C "$hooks" commit -qm hooks
rev=$(git -C "$hooks" rev-parse HEAD)

# The board repository, 4K pages: everything passes.
repo=$work/boards
cp -r "$source/examples/board-repo" "$repo"
cat > "$repo/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: cmalign-check
        args: [boards/, -I, include, -c, configs/acme_defconfig, --kernel-version, "6.12", --affected-by]
YAML
cd "$repo"
git init -q && git add . && git commit -qm boards

run_hook() { # expected exit code; output in $out
    local want=$1 code=0
    out=$(pre-commit run --color never 2>&1) || code=$?
    echo "$out"
    [[ $code == "$want" ]] || fail "pre-commit exited $code, expected $want"
}

# A change to one board that keeps its pools valid: passes, and only that board is checked.
sed -i 's/ACME EVK/ACME EVK rev B/' boards/acme-evk.dts
git add boards/acme-evk.dts
run_hook 0
[[ $out == *"cmalign check"*"Passed"* ]] || fail "hook did not pass"

# Moving the defconfig to 16K pages: every board is checked, the ACME ones fail.
git commit -qm "rev B"
cat configs/16k.config >> configs/acme_defconfig
git add configs/acme_defconfig
run_hook 1
[[ $out == *"acme-soc.dtsi"*"[cma-size-alignment]"* ]] || fail "16K: finding not reported"
git checkout -q configs/acme_defconfig && git reset -q

# A shared .dtsi whose pool shrinks below the 4K alignment: the hook fails on it, and the board
# that shares nothing with it (beta-board.dts) is not even read.
sed -i 's/size = <0x0 0x400000>;/size = <0x0 0x300000>;/' boards/acme-soc.dtsi
git add boards/acme-soc.dtsi
run_hook 1
[[ $out == *"acme-soc.dtsi:"*"[cma-size-alignment]"* ]] || fail "shared .dtsi: no finding"
[[ $out == *"2 boards checked"* ]] || fail "shared .dtsi: not exactly the two ACME boards"
[[ $out != *"beta-board"* ]] || fail "an unaffected board was checked"
echo "pre-commit test passed"
