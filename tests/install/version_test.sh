#!/usr/bin/env bash
# One version everywhere: the CMake project's (passed in) is the program's --version, the Python
# package metadata's (setup.py), debian/changelog's and the newest release heading of CHANGELOG.md
# or an "Unreleased" section above it.
# Usage: version_test.sh PROJECT_VERSION SOURCE_DIR CMALIGN_PROGRAM
set -euo pipefail
want=$1 source=$2 program=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

got=$("$program" --version | awk '{print $2}')
[[ $got == "$want" ]] || fail "cmalign --version says '$got', the project '$want'"

got=$(cd "$source" && /usr/bin/python3 -c 'import runpy; print(runpy.run_path("setup.py", run_name="version")["project_version"]())')
[[ $got == "$want" ]] || fail "setup.py gives '$got', the project '$want'"

got=$(sed -n '1s/^cmalign (\([^)-]*\)\(-[^)]*\)\?).*/\1/p' "$source/debian/changelog")
[[ $got == "$want" ]] || fail "debian/changelog's newest entry is '$got', the project '$want'"

# The newest release heading is the project's version; an "Unreleased" section may stand above it.
released=$(grep -m1 -E '^## [0-9]' "$source/CHANGELOG.md" | sed 's/^## //')
[[ $released == "$want" ]] || fail "CHANGELOG.md's newest release is '$released', the project '$want'"
first=$(grep -m1 -E '^## ' "$source/CHANGELOG.md" | sed 's/^## //')
[[ $first == "$want" || $first == Unreleased ]] ||
    fail "CHANGELOG.md's first section is '$first': a release or Unreleased"
echo "version $want: program, setup.py, debian/changelog and CHANGELOG.md agree"
