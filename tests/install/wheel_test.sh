#!/usr/bin/env bash
# The Python package as users install it: `pip wheel` of the repository (pyproject.toml, setup.py
# driving CMake; here it reuses this build tree through CMALIGN_CMAKE_BUILD_DIR instead of
# compiling again), the wheel's contents and metadata, then the wheel installed into a fresh venv
# and used from there: `import cmalign`, the `cmalign` command, `python -m cmalign`, and the
# Python test suite run against the installed package (not the build tree).
# Only Debian's packages, no index: --no-build-isolation in venvs made with
# --system-site-packages (setuptools, wheel and pytest from Debian).
# Usage: wheel_test.sh BUILD_DIR SOURCE_DIR PROJECT_VERSION
set -euo pipefail
build=$(cd "$1" && pwd) source=$(cd "$2" && pwd) version=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/cmalign-wheel-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
python=/usr/bin/python3
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1

# setuptools writes its metadata beside setup.py: build from a copy of what the package needs.
mkdir -p "$work/src/bindings/python"
cp "$source"/{pyproject.toml,setup.py,README.md,LICENSE,CMakeLists.txt} "$work/src/"
cp -r "$source/bindings/python/cmalign" "$work/src/bindings/python/"

"$python" -m venv --system-site-packages "$work/build-venv"
CMALIGN_CMAKE_BUILD_DIR=$build "$work/build-venv/bin/pip" wheel -q --no-build-isolation --no-deps \
    -w "$work/dist" "$work/src" >"$work/wheel.log" 2>&1 || { cat "$work/wheel.log"; fail "pip wheel"; }
wheel=$(ls "$work"/dist/cmalign-"$version"-*.whl) || fail "no wheel cmalign-$version-*.whl"
echo "built $(basename "$wheel")"

# What the wheel carries: the package, its stubs and marker, the native module, the program.
"$python" - "$wheel" "$version" <<'PY' || fail "wheel contents"
import sys, zipfile
wheel, version = sys.argv[1], sys.argv[2]
names = set(zipfile.ZipFile(wheel).namelist())
want = ["cmalign/__init__.py", "cmalign/__init__.pyi", "cmalign/py.typed", "cmalign/__main__.py",
        "cmalign/_bin/cmalign"]
missing = [n for n in want if n not in names]
if not any(n.startswith("cmalign/_cmalign") and n.endswith(".so") for n in names):
    missing.append("cmalign/_cmalign*.so")
info = f"cmalign-{version}.dist-info/"
meta = zipfile.ZipFile(wheel).read(info + "METADATA").decode()
entry = zipfile.ZipFile(wheel).read(info + "entry_points.txt").decode()
if f"\nVersion: {version}\n" not in meta:
    missing.append(f"METADATA Version: {version}")
if "cmalign = cmalign.__main__:main" not in entry:
    missing.append("console script cmalign")
mode = zipfile.ZipFile(wheel).getinfo("cmalign/_bin/cmalign").external_attr >> 16
if not mode & 0o100:
    missing.append("cmalign/_bin/cmalign executable")
if missing:
    sys.exit("missing from the wheel: " + ", ".join(missing))
PY

# A fresh venv, the wheel installed into it, used from outside the source tree.
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-deps "$wheel" || fail "pip install the wheel"
cd "$work"
got=$("$work/venv/bin/python" -c 'import cmalign; print(cmalign.__version__, cmalign.__file__)')
[[ $got == "$version $work/venv/"* ]] || fail "import cmalign from the venv: '$got'"
[[ $("$work/venv/bin/cmalign" --version) == "cmalign $version"* ]] || fail "cmalign --version"
[[ $("$work/venv/bin/python" -m cmalign --version) == "cmalign $version"* ]] ||
    fail "python -m cmalign --version"
status=0
out=$("$work/venv/bin/cmalign" check "$source/examples/boards/seed-board.dts" \
    -c "$source/examples/configs/arm64-16k.config" 2>&1) || status=$?
echo "$out"
[[ $status == 1 ]] || fail "the example board on 16K pages: exit $status, expected 1"
[[ $(grep -c ': error: ' <<<"$out") == 2 ]] || fail "the example board on 16K pages: not two errors"

# The Python suite against the installed package: nothing points into the build tree.
env -u PYTHONPATH CMALIGN_CLI="$work/venv/bin/cmalign" \
    "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$source/tests/python" \
    --ignore="$source/tests/python/test_parity.py" \
    --ignore="$source/tests/python/test_doc_examples.py" || fail "Python tests on the installed wheel"
echo "ok: wheel $(basename "$wheel") installs and passes the Python tests"
