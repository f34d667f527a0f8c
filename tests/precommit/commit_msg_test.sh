#!/usr/bin/env bash
# scripts/commit-msg on good and bad messages: run by itself, as a git hook through
# core.hooksPath, and as the cmalign-commit-msg hook of .pre-commit-hooks.yaml run by pre-commit
# (offline: the hooks repository is a local copy of this checkout's hook files).
# Usage: commit_msg_test.sh SOURCE_DIR
set -euo pipefail
source=$(realpath "$1")
hook=$source/scripts/commit-msg
work=$(mktemp -d "${TMPDIR:-/tmp}/cmalign-commit-msg-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME=$work/cache HOME=$work/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
git config --global user.email test@example.org
git config --global user.name test
git config --global init.defaultBranch main
git config --global protocol.file.allow always

fail() { echo "FAIL: $*" >&2; exit 1; }
subject72=$(printf 'x%.0s' $(seq 72))

# Run by itself: exit status and the reason on stderr.
expect() { # want, stderr pattern ('' for none), message text
    local want=$1 pattern=$2 code=0 err
    printf '%s' "$3" >"$work/msg"
    err=$("$hook" "$work/msg" 2>&1 >/dev/null) || code=$?
    [[ $code == "$want" ]] || fail "exit $code, expected $want, for: $3"
    [[ -z $pattern || $err == *"$pattern"* ]] || fail "no '$pattern' in: $err"
    [[ $want == 1 ]] || [[ -z $err ]] || fail "a good message printed: $err"
}
expect 0 '' $'Add a commit-msg hook\n\nThe body says why, with the figures.\n'
expect 0 '' 'Subject alone, no newline'
expect 0 '' "$subject72"$'\n'
expect 0 '' $'\u00e9'"${subject72:1}"$'\n'                     # 72 characters, 73 bytes
expect 0 '' $'# a comment git strips\n\nFix a typo\n\n# Please enter the commit message\n'
expect 0 '' $'Fix a typo\n# ------------------------ >8 ------------------------\nnot part\n'
expect 1 'more than 72' "${subject72}y"$'\n\nbody\n'
expect 1 'is 73 characters long' "${subject72}y"
expect 1 'second line is not blank' $'Fix a typo\nand explain it on the next line\n'
expect 1 'empty' $'\n\n# only comments\n'
expect 1 'empty' ''
echo "direct runs passed"

# As git's commit-msg hook through core.hooksPath, as CONTRIBUTING.md installs it.
repo=$work/repo
git init -q "$repo"
cd "$repo"
git config core.hooksPath "$source/scripts"
echo a >a && git add a
git commit -q -m "Add a" || fail "core.hooksPath: a good message was refused"
echo b >b && git add b
if git commit -q -m "${subject72} and more" 2>"$work/err"; then
    fail "core.hooksPath: a long subject was accepted"
fi
grep -q "more than 72" "$work/err" || fail "core.hooksPath: no reason given: $(cat "$work/err")"
git commit -q -m "Add b" -m "Why b, with figures." || fail "core.hooksPath: subject and body refused"
[[ $(git log --format=%s -1) == "Add b" ]] || fail "core.hooksPath: wrong commit"
echo "core.hooksPath passed"

# As the cmalign-commit-msg hook of .pre-commit-hooks.yaml.
hooks=$work/hooks
mkdir -p "$hooks/scripts"
cp "$source/.pre-commit-hooks.yaml" "$hooks/"
cp "$hook" "$hooks/scripts/"
git -C "$hooks" init -q
git -C "$hooks" add . && git -C "$hooks" commit -q -m hooks --no-verify
rev=$(git -C "$hooks" rev-parse HEAD)
repo=$work/precommit
git init -q "$repo"
cd "$repo"
cat >.pre-commit-config.yaml <<YAML
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: cmalign-commit-msg
YAML
pre-commit install --hook-type commit-msg >/dev/null
git add .pre-commit-config.yaml
git commit -q -m "Add the pre-commit configuration" >"$work/out" 2>&1 \
    || fail "pre-commit: a good message was refused: $(cat "$work/out")"
echo c >c && git add c
if git commit -q -m "${subject72} and more" >"$work/out" 2>&1; then
    fail "pre-commit: a long subject was accepted"
fi
grep -q "more than 72" "$work/out" || fail "pre-commit: no reason given: $(cat "$work/out")"
[[ $(git rev-list --count HEAD) == 1 ]] || fail "pre-commit: the refused commit was made"
echo "pre-commit passed"
echo "commit-msg test passed"
