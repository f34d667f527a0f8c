"""cmalign.fix gives the CLI's fix JSON and writes exactly what the CLI writes."""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

import cmalign

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CMALIGN_CLI")
CONFIG = str(ROOT / "examples/configs/arm64-16k.config")
SEED = ROOT / "examples/boards/upstream-commit-example.dts"


def test_plan_only_writes_nothing(tmp_path):
    board = tmp_path / "seed.dts"
    shutil.copyfile(SEED, board)  # the content only: the copy must be writable
    before = board.read_bytes()
    got = cmalign.fix(str(board), configs=[CONFIG])
    assert [(e["old"], e["new"], e["property"]) for e in got["edits"]] == [
        ("0x400000", "0x2000000", "size")]
    assert got["edits"][0]["line"] == 24
    assert got["written"] == []
    assert board.read_bytes() == before
    if CLI:
        cli = subprocess.run([CLI, "fix", str(board), "-c", CONFIG, "--format", "json"],
                             capture_output=True, text=True)
        assert cli.returncode == 1
        assert json.loads(cli.stdout) == got


def test_in_place_and_out(tmp_path):
    board = tmp_path / "seed.dts"
    shutil.copyfile(SEED, board)  # the content only: the copy must be writable
    before = board.read_bytes()
    out = tmp_path / "out.dts"
    got = cmalign.fix(str(board), out=str(out), configs=[CONFIG])
    assert got["written"] == [str(out)]
    assert board.read_bytes() == before
    assert out.read_bytes() == before.replace(b"0x400000>", b"0x2000000>")
    got = cmalign.fix(str(board), in_place=True, configs=[CONFIG])
    assert len(got["written"]) == 1
    assert board.read_bytes() == out.read_bytes()
    again = cmalign.fix(str(board), in_place=True, configs=[CONFIG])
    assert again["edits"] == [] and again["written"] == []


def test_bad_input_raises_with_location(tmp_path):
    board = tmp_path / "bad.dts"
    board.write_text("/dts-v1/;\n/ {\n\tfoo = <1;\n};\n")
    before = board.read_bytes()
    with pytest.raises(cmalign.Error) as info:
        cmalign.fix(str(board), in_place=True, configs=[CONFIG])
    assert "bad.dts:" in str(info.value)
    assert board.read_bytes() == before
    with pytest.raises(cmalign.Error):
        cmalign.fix(str(board), out=str(tmp_path / "o.dts"), in_place=True, configs=[CONFIG])


def test_macro_size_is_a_diagnostic_not_an_exception(tmp_path):
    board = tmp_path / "m.dts"
    board.write_text(SEED.read_text().replace("/dts-v1/;", "/dts-v1/;\n#define POOL 0x400000")
                     .replace("<0x0 0x400000>", "<0x0 POOL>"))
    before = board.read_bytes()
    got = cmalign.fix(str(board), in_place=True, configs=[CONFIG])
    assert got["edits"] == []
    errors = [d for d in got["diagnostics"] if d["severity"] == "error"]
    assert errors and "0x2000000" in errors[0]["message"]
    assert board.read_bytes() == before
