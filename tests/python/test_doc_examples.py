"""Every `$ cmalign ...` example of README.md, docs/ and examples/README.md runs, and the output
shown under it is what the program prints.

The shown lines are matched in order against stdout, a line not found there against stderr (the
summary lines go there). `…` in a shown line stands for any text, and a line that is only `...`
or `…` for any lines: a document may shorten, never invent."""
import os
import pathlib
import re
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


def test_the_documents_have_examples():
    assert len(CASES) >= 8


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
