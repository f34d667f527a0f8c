#!/usr/bin/python3
"""No #include of the library's sources goes unused, as include-what-you-use sees it.

Runs include-what-you-use (Debian's `iwyu`) on every source of the cmalign library (the files of
the `cmalign` target in BUILD_DIR/compile_commands.json; a source's own header is checked with
it) and reports each include it says to remove. What it says to add is not checked: the sources
rely on headers that bring what they name (fmt/format.h for fmt/core.h, and so on), and only an
unused include costs every build its parsing. tests/iwyu.imp maps the private headers of the
libraries to the public ones that are included instead. An include that is needed for a reason
the tool cannot see carries `// IWYU pragma: keep`.

Usage: unused-includes.py SOURCE_DIR BUILD_DIR [FILE...]
Exit 0 clean, 1 on an unused include or a file the tool could not read, 77 (skipped) when
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


def library_commands(build: Path, only):
    """(source, directory, compiler arguments) of each library source. A unity build's batch
    (CMAKE_UNITY_BUILD) stands for the sources it includes, each checked on its own."""
    for entry in json.loads((build / "compile_commands.json").read_text()):
        if "CMakeFiles/cmalign.dir/" not in entry["command"]:
            continue
        args = shlex.split(entry["command"])[1:]
        sources = [entry["file"]]
        if UNITY.search(entry["file"]):
            sources = UNITY_INCLUDE.findall(Path(entry["file"]).read_text())
        for source in sources:
            if only and not any(source.endswith(f) for f in only):
                continue
            yield source, entry["directory"], [source if a == entry["file"] else a for a in args]


def iwyu_command(tool: str, args, mapping: Path):
    return ([tool] + args + ["-Wno-unknown-warning-option", "-Xiwyu", f"--mapping_file={mapping}",
                             "-Xiwyu", "--no_fwd_decls", "-Xiwyu", "--max_line_length=200"])


def unused(text: str):
    """(file, line, include) of every "should remove these lines" entry of iwyu's output."""
    found, current = [], None
    for line in text.splitlines():
        if line.endswith(" should remove these lines:"):
            current = line[: -len(" should remove these lines:")]
            continue
        if not line.strip() or line.startswith("The full include-list"):
            current = None
            continue
        m = REMOVE.match(line)
        if current and m:
            found.append((current, int(m.group(2)), m.group(1)))
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
    entries = list(library_commands(build, sys.argv[3:]))
    if not entries:
        print(f"no library source in {build}/compile_commands.json")
        return 1
    mapping = root / "tests/iwyu.imp"

    def run(entry):
        source, directory, args = entry
        done = subprocess.run(iwyu_command(tool, args, mapping), cwd=directory,
                              capture_output=True, text=True)
        return source, done.stderr + done.stdout

    bad = 0
    findings = set()
    jobs = int(os.environ.get("CMALIGN_IWYU_JOBS", os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for source, text in pool.map(run, entries):
            if re.search(r"(^|\n)\S+: (fatal )?error: ", text):
                print(f"{source}: include-what-you-use could not read it:\n{text}")
                bad += 1
            findings.update(unused(text))
    for file, line, include in sorted(findings):
        print(f"{Path(file).resolve().relative_to(root)}:{line}: unused {include}")
    bad += len(findings)
    print(f"{len(entries)} sources, {len(findings)} unused include(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
