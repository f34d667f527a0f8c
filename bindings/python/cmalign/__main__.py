"""`python -m cmalign ARGS` and the `cmalign` command of an installed wheel: the cmalign program
that was built with this module (cmalign/_bin/cmalign), with the same arguments and exit code."""
import os
import pathlib
import shutil
import sys


def program():
    """The path of the cmalign program: the one shipped in the package, else the one on PATH
    (a package installed by `cmake --install` or from Debian ships the program in bin/)."""
    bundled = pathlib.Path(__file__).resolve().parent / "_bin" / "cmalign"
    if bundled.is_file():
        return str(bundled)
    found = shutil.which("cmalign")
    if found and pathlib.Path(found).resolve() != pathlib.Path(sys.argv[0]).resolve():
        return found
    sys.exit("cmalign: the cmalign program is not installed beside this Python package")


def main():
    path = program()
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
