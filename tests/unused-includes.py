#!/usr/bin/python3
"""No #include of the library's sources and headers goes unused, as include-what-you-use sees it.

Runs include-what-you-use (Debian's `iwyu`) on the translation units of the cmalign library (the
`cmalign` target in BUILD_DIR/compile_commands.json) and reports each include it says to remove
from a file of src/ or include/: the sources, and every header of the repository they include
(--check_also). A header is checked in each unit that includes it; one of its includes is unused
when every unit says so (a template may use it in one unit only). What the tool says to add is
not checked: the sources rely on headers that bring what they name (fmt/format.h for fmt/core.h,
and so on), and only an unused include costs every build its parsing. tests/iwyu.imp maps the
private headers of the libraries to the public ones that are included instead. An include that
is needed for a reason the tool cannot see carries `// IWYU pragma: keep` and says why.

A unity build (CMAKE_UNITY_BUILD, as CI builds) is checked one batch at a time: the headers are
parsed once per batch, not once per source (11 runs instead of 115, a quarter of the CPU). In
a batch a source also sees the sources before it (their using-declarations, their includes), so
what a batch finds is checked again on the file alone (the source, or the header as the main
file), and only what both runs find is reported.

Usage: unused-includes.py SOURCE_DIR BUILD_DIR [FILE...]   (FILE: check the units holding it)
Exit 0 clean, 1 on an unused include or a unit the tool could not read, 77 (skipped) when
include-what-you-use is not installed, unless CMALIGN_REQUIRE_MATERIAL (or CI) is set: then 1.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

UNITY = re.compile(r"/Unity/unity_[^/]*\.cxx$")
UNITY_INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
REMOVE = re.compile(r"^- (#include [<\"][^>\"]+[>\"]).*// lines (\d+)-\d+$")
CHECKED = [re.compile(r"^(\S+) should (?:add|remove) these lines:$"),
           re.compile(r"^The full include-list for (\S+):$"),
           re.compile(r"^\((\S+) has correct #includes/fwd-decls\)$")]
ERROR = re.compile(r"(^|\n)\S+: (fatal )?error: ")


def library_units(build: Path, only):
    """(main file, directory, compiler arguments, sources) of each translation unit of the
    library: a source, or a unity build's batch and the sources it includes."""
    for entry in json.loads((build / "compile_commands.json").read_text()):
        if "CMakeFiles/cmalign.dir/" not in entry["command"]:
            continue
        sources = [entry["file"]]
        if UNITY.search(entry["file"]):
            sources = UNITY_INCLUDE.findall(Path(entry["file"]).read_text())
        if only and not any(s.endswith(f) for s in sources for f in only):
            continue
        yield entry["file"], entry["directory"], shlex.split(entry["command"])[1:], sources


def alone(unit, file: str):
    """The unit that checks `file` on its own, with the compiler arguments of `unit`."""
    main_file, directory, args, _ = unit
    if file.endswith(".cpp"):
        return file, directory, [file if a == main_file else a for a in args], [file]
    # A header as the main file: C++, not a precompiled header; its #pragma once is expected.
    header = ["-Wno-pragma-once-outside-header", "-x", "c++", file]
    return file, directory, [a for a in args if a != main_file] + header, [file]


def iwyu_command(tool: str, args, root: Path, check_also: bool):
    folders = ("src", "include") if check_also else ()
    options = [f"--mapping_file={root}/tests/iwyu.imp", "--no_fwd_decls", "--max_line_length=200",
               *(f"--check_also={root}/{folder}/*" for folder in folders)]
    return [tool, *args, "-Wno-unknown-warning-option"] + [x for o in options for x in ("-Xiwyu", o)]


def findings(text: str):
    """{file: {(line, include) it should remove}} for every file iwyu's output reports on."""
    found, current = {}, None
    for line in text.splitlines():
        for pattern in CHECKED:
            m = pattern.match(line)
            if m:
                found.setdefault(m.group(1), set())
        if line.endswith(" should remove these lines:"):
            current = line[: -len(" should remove these lines:")]
            continue
        if not line.strip() or line.startswith("The full include-list"):
            current = None
            continue
        m = REMOVE.match(line)
        if current and m:
            found[current].add((int(m.group(2)), m.group(1)))
    return found


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root, build = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    tool = shutil.which("include-what-you-use")
    if not tool:
        if os.environ.get("CMALIGN_REQUIRE_MATERIAL") or os.environ.get("CI"):
            print("error: include-what-you-use is not installed (scripts/install-deps: iwyu)")
            return 1
        print("skipped: include-what-you-use is not installed (scripts/install-deps: iwyu)")
        return 77
    # Which includes a file uses depends on the standard library's and the tool's version: the
    # verdict is defined with Debian 12's (include-what-you-use 0.18, libstdc++ 12), which CI
    # runs; removing what a newer one flags could break that build. Elsewhere: a visible skip.
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    if not version.startswith("include-what-you-use 0.18 "):
        print(f"skipped: the unused-include verdict is include-what-you-use 0.18's (Debian 12); "
              f"here: {version.strip()}")
        return 77
    units = list(library_units(build, sys.argv[3:]))
    if not units:
        print(f"no library source in {build}/compile_commands.json")
        return 1
    ours = (f"{root}/src/", f"{root}/include/")  # not a unity batch, not a generated source
    jobs = int(os.environ.get("CMALIGN_IWYU_JOBS", os.cpu_count() or 1))
    failed = []

    def run_all(todo, check_also):
        """{file: (what every unit that checked it says to remove, a unit that checked it)}"""
        def run(unit):
            done = subprocess.run(iwyu_command(tool, unit[2], root, check_also), cwd=unit[1],
                                  capture_output=True, text=True)
            return unit, done.stderr + done.stdout

        result = {}
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for unit, text in pool.map(run, todo):
                if ERROR.search(text):
                    failed.append(f"{unit[0]}: include-what-you-use could not read it:\n{text}")
                for file, remove in findings(text).items():
                    if file.startswith(ours):
                        seen = result.get(file, (remove, unit))[0]
                        result[file] = (seen & remove, unit)
        return result

    checked = run_all(units, True)
    again = [alone(unit, file) for file, (remove, unit) in checked.items()
             if remove and UNITY.search(unit[0])]
    for file, (remove, _) in run_all(again, False).items():
        if file in checked:
            checked[file] = (checked[file][0] & remove, None)
    missing = [s for unit in units for s in unit[3] if s not in checked and s.startswith(ours)]
    listed = sorted((Path(f).relative_to(root), line, include)
                    for f, (remove, _) in checked.items() for line, include in remove)
    for text in failed:
        print(text)
    for source in missing:
        print(f"{source}: include-what-you-use did not report on it")
    for file, line, include in listed:
        print(f"{file}:{line}: unused {include}")
    print(f"{len(units)} units and {len(again)} files alone: {len(checked)} files checked, "
          f"{len(listed)} unused include(s)")
    return 1 if failed or missing or listed else 0


if __name__ == "__main__":
    sys.exit(main())
