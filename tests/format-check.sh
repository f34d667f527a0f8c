#!/usr/bin/env bash
# Every C/C++ source of the repository is clang-formatted with the repository's .clang-format
# (clang-format from scripts/install-deps). Lists the files that are not. Not checked: the
# device-tree headers under examples/ (dt-bindings for .dts files) and the data table *.inc.
# Usage: format-check.sh SOURCE_DIR
set -euo pipefail
root=$1
# The formatting is clang-format 14's, Debian 12's, which CI runs: other major versions lay out a
# few constructs differently (`struct stat st {}`, `bool T::*f`, trailing comments), so on a release
# without clang-format 14 the check is skipped, visibly.
format=
for tool in clang-format-14 clang-format; do
    if command -v "$tool" >/dev/null && [[ $("$tool" --version) =~ version\ 14\. ]]; then
        format=$tool
        break
    fi
done
if [[ -z $format ]]; then
    if ! command -v clang-format >/dev/null && [[ -n ${CI:-} ]]; then
        echo "error: clang-format is not installed (scripts/install-deps)" >&2
        exit 1
    fi
    echo "skipped: the formatting is clang-format 14's (Debian 12); here: $(clang-format --version 2>&1 | head -1)"
    exit 77
fi
cd "$root"
bad=0
while IFS= read -r -d '' f; do
    if ! "$format" --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not clang-formatted: $f (clang-format -i $f)"
        bad=$((bad + 1))
    fi
done < <(find src include tests bindings fuzz bench examples \
              \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) \
              -not -path '*/data/*' -not \( -path 'examples/*' -name '*.h' \) -print0 | sort -z)
echo "$bad file(s) not clang-formatted"
[[ $bad -eq 0 ]]
