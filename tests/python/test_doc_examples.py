"""Every example of README.md, docs/ and examples/README.md runs.

A `$ cmalign ...` line runs and the output shown under it is what the program prints: the shown
lines are matched in order against stdout, a line not found there against stderr (the summary
lines go there). `…` in a shown line stands for any text, and a line that is only `...` or `…`
for any lines: a document may shorten, never invent.

A `cmalign ...` line of a code block (no `$`, no output shown) runs too, in a copy of
tests/data/doc-examples, which holds the files the examples name (board.dts, .config, boot.log,
camera.dtso, a kernel tree as `linux`, ...): it must exit 0 or 1, never with a usage or input
error. A usage synopsis (`[--format text|json]`, `(A | B)`, `FILE...`) is not run; every option
it names must be one the command has (its --help lists it)."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CMALIGN_CLI")
# Where a document's commands run (examples/README.md says so in its walkthrough).
WORKDIR = {"examples/README.md": ROOT / "examples/board-repo"}
DOCUMENTS = ["README.md", "examples/README.md"] + sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))


def examples(document):
    """(line number, command, shown output lines) for every `$ cmalign` line."""
    lines = (ROOT / document).read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        if not text.startswith("$ cmalign "):
            i += 1
            continue
        start = i
        command = text[2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        indent = len(lines[start]) - len(lines[start].lstrip())
        shown = []
        i += 1
        while i < len(lines):
            line = lines[i]
            if not line.strip() or line.strip().startswith("```") or line.strip().startswith("$ "):
                break
            shown.append(line[indent:].rstrip())
            i += 1
        out.append((start + 1, command, shown))
    return out


def pattern(shown_line):
    parts = [re.escape(p) for p in re.split(r"\s*…\s*|\s+\.\.\.(?:\s+|$)", shown_line)]
    return re.compile("^" + r".*".join(parts) + r"\s*$")


def matches(shown, stdout, stderr):
    """The first shown line that is not in the output, or None."""
    positions = {"out": 0, "err": 0}
    streams = {"out": stdout.splitlines(), "err": stderr.splitlines()}
    for line in shown:
        if line.strip() in ("...", "…"):
            continue
        regex = pattern(line)
        for name in ("out", "err"):
            found = next((k for k in range(positions[name], len(streams[name]))
                          if regex.match(streams[name][k].rstrip())), None)
            if found is not None:
                positions[name] = found + 1
                break
        else:
            return line
    return None


CASES = [pytest.param(doc, number, command, shown, id=f"{doc}:{number}")
         for doc in DOCUMENTS for number, command, shown in examples(doc)]

KSRC = pathlib.Path(os.environ.get("CMALIGN_KSRC", "/opt/cmalign/ksrc"))
KERNELS = pathlib.Path(os.environ.get("CMALIGN_KERNELS", "/opt/cmalign/kernels"))
REQUIRED = os.environ.get("CMALIGN_REQUIRE_MATERIAL") == "1"
# Usage forms: optional parts, alternatives, groups, repetition.
SYNOPSIS = re.compile(r"[\[\]|()]|\.\.\.|…|\b[A-Z]{2,}\b(?!=)")


def listed(document):
    """(line number, command) for every `cmalign ...` line of a code block (indented or fenced)
    that is not a `$` example, its trailing `# comment` kept (the shell drops it)."""
    out = []
    lines = (ROOT / document).read_text().splitlines()
    fenced = False
    for number, line in enumerate(lines, 1):
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if not (fenced or line.startswith("    ")):
            continue
        text = line.strip()
        if not re.match(r"cmalign [a-z][a-z-]*(\s|$)", text):
            continue  # not a command line ("cmalign map: board.dts" heads a map's output)
        while text.endswith("\\") and number < len(lines):
            text = text[:-1] + " " + lines[number].strip()
            number += 1
        out.append((number, text))
    return out


LISTED = [pytest.param(doc, number, command, id=f"{doc}:{number}")
          for doc in DOCUMENTS for number, command in listed(doc)]


def without_comment(command):
    return re.sub(r"\s+#\s.*$", "", command)


@pytest.fixture(scope="session")
def doc_dir(tmp_path_factory):
    """A copy of tests/data/doc-examples (links resolved) with board.dtb, linux, zoneinfo.txt,
    and vmlinuz/config of Debian's 6.12 16K kernel."""
    work = tmp_path_factory.mktemp("doc-examples") / "d"
    shutil.copytree(ROOT / "tests/data/doc-examples", work, symlinks=False)
    cpp = subprocess.run(["cpp", "-nostdinc", "-undef", "-x", "assembler-with-cpp", "-P",
                          "board.dts"], cwd=work, capture_output=True, check=True)
    subprocess.run(["dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", "board.dtb", "-"],
                   input=cpp.stdout, cwd=work, check=True)
    shutil.copy(ROOT / "tests/data/pcp/x86_64-6.18-vm.zoneinfo", work / "zoneinfo.txt")
    material = {"linux": KSRC / "linux-source-6.12",
                "vmlinuz": KERNELS / "6.12-arm64-16k/vmlinuz",
                "config": KERNELS / "6.12-arm64-16k/config"}
    for name, target in material.items():
        if target.exists():
            (work / name).symlink_to(target)
    return work


def needs(command, work):
    """The material an example names that is not here (a kernel tree, a kernel image)."""
    return [name for name in ("linux", "vmlinuz")
            if re.search(rf"(^|\s){name}(/|\s|$)", command) and not (work / name).exists()]


@pytest.mark.parametrize("document,number,command", LISTED)
def test_listed_example_runs(document, number, command, doc_dir):
    assert CLI, "CMALIGN_CLI names the built program (set by ctest)"
    bare = without_comment(command)
    words = bare.split()
    if SYNOPSIS.search(bare):
        help_text = subprocess.run([CLI, words[1], "--help"], capture_output=True, text=True)
        assert help_text.returncode == 0, f"{document}:{number}: no command {words[1]}"
        for word in words[2:]:
            flag = re.match(r"[\[(|]*(--?[A-Za-z][\w-]*)", word)
            if flag:
                assert re.search(rf"(^|[\s,]){re.escape(flag.group(1))}\b", help_text.stdout,
                                 re.M), f"{document}:{number}: {words[1]} has no {flag.group(1)}"
        return
    missing = needs(bare, doc_dir)
    if missing:
        if REQUIRED:
            pytest.fail(f"{document}:{number}: material missing: {missing}")
        pytest.skip(f"material missing: {missing}")
    run = subprocess.run(CLI + bare[len("cmalign"):], shell=True, capture_output=True, text=True,
                         cwd=doc_dir, env={**os.environ, "LC_ALL": "C.UTF-8"}, timeout=300)
    assert run.returncode in (0, 1), (f"{document}:{number}: exit {run.returncode}\n"
                                      f"{run.stderr[-2000:]}")


def test_the_documents_have_examples():
    assert len(CASES) >= 8
    assert len(LISTED) >= 30


@pytest.mark.parametrize("document,number,command,shown", CASES)
def test_example_runs_and_prints_what_is_shown(document, number, command, shown):
    assert CLI, "CMALIGN_CLI names the built program (set by ctest)"
    cwd = WORKDIR.get(document, ROOT)
    run = subprocess.run(CLI + command[len("cmalign"):], shell=True, capture_output=True,
                         text=True, cwd=cwd, env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert run.returncode in (0, 1), f"{document}:{number}: exit {run.returncode}\n{run.stderr}"
    missing = matches(shown, run.stdout, run.stderr)
    assert missing is None, (f"{document}:{number}: shown but not printed:\n  {missing}\n"
                             f"--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}")
