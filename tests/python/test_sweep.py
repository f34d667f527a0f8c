"""cmalign.check(..., sweep_versions=..., sweep_page_sizes=...) gives the CLI's sweep JSON."""
import json
import os
import pathlib
import subprocess

import pytest

import cmalign

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CMALIGN_CLI")
BOARD = str(ROOT / "examples/boards/seed-board.dts")
CONFIG = str(ROOT / "examples/configs/arm64-4k.config")


def test_sweep_cells_match_single_checks():
    got = cmalign.check([BOARD], configs=[CONFIG], sweep_versions="6.12,6.16",
                        sweep_page_sizes="4K,16K")
    cells = got["sweep"]
    assert [(c["kernel_version"], c["page_size"]) for c in cells] == [
        ("6.12", 4096), ("6.16", 4096), ("6.12", 16384), ("6.16", 16384)]
    for cell in cells:
        sets = {k: "n" for k in ("CONFIG_ARM64_4K_PAGES", "CONFIG_ARM64_16K_PAGES",
                                 "CONFIG_ARM64_64K_PAGES")}
        sets[{4096: "CONFIG_ARM64_4K_PAGES", 16384: "CONFIG_ARM64_16K_PAGES"}[cell["page_size"]]] = "y"
        single = cmalign.check([BOARD], configs=[CONFIG], sets=sets,
                               kernel_version=cell["kernel_version"])
        assert cell["diagnostics"] == single["diagnostics"]
        assert cell["summary"] == single["summary"]
        assert cell["cma_min_alignment_bytes"] == single["alignment"]["cma_min_alignment_bytes"]
    assert cells[2]["summary"]["errors"] == 2  # both pools lost on 16K pages


def test_sweep_matches_the_cli():
    if not CLI:
        pytest.fail("CMALIGN_CLI is not set: ctest sets it")
    got = cmalign.check([BOARD], configs=[CONFIG], sweep_versions="6.1..6.3")
    cli = json.loads(subprocess.run([CLI, "check", BOARD, "-c", CONFIG, "--sweep-versions",
                                     "6.1..6.3", "--format", "json"],
                                    capture_output=True, text=True).stdout)
    assert got == cli


def test_bad_sweep_raises():
    with pytest.raises(cmalign.Error):
        cmalign.check([BOARD], configs=[CONFIG], sweep_versions="6.1..9.9")
    with pytest.raises(cmalign.Error):
        cmalign.check([BOARD], configs=[CONFIG], sweep_page_sizes="4K")
