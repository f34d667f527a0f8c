"""The Python module gives the same results as the CLI's JSON."""
import json
import os
import pathlib
import subprocess

import pytest

import cmalign

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CMALIGN_CLI")


def test_version_is_a_string():
    assert isinstance(cmalign.__version__, str) and cmalign.__version__.count(".") == 2


def test_error_is_a_value_error():
    assert issubclass(cmalign.Error, ValueError)


def test_calc_cases_of_the_upstream_commit():
    cases = json.loads((ROOT / "tests/data/calc-cases.json").read_text())["cases"]
    assert len(cases) >= 6
    for case in cases:
        got = cmalign.calc(arch=case["arch"], kernel_version=case["kernel_version"], sets=case["set"])
        for key, want in case["want"].items():
            assert got[key] == want, (case["name"], key)


def test_calc_matches_the_cli_json():
    config = str(ROOT / "examples/configs/arm64-16k.config")
    got = cmalign.calc(configs=[config])
    assert got["cma_min_alignment_bytes"] == 32 << 20
    assert got["kernel_version"] == "6.12.117"
    if CLI:
        cli = json.loads(subprocess.run([CLI, "calc", "--format", "json", "-c", config],
                                        check=True, capture_output=True, text=True).stdout)
        assert got == cli


def test_bad_input_raises_with_location(tmp_path):
    bad = tmp_path / "bad.config"
    # A line kconfig cannot take is a warning (docs/kconfig.md); a file that is no text is an error.
    bad.write_bytes(b"CONFIG_ARM64=y\n\0\x01\x02binary\0")
    with pytest.raises(cmalign.Error) as err:
        cmalign.calc(configs=[str(bad)])
    assert f"{bad}:2:" in str(err.value)


def test_contradictory_page_sizes_raise():
    with pytest.raises(cmalign.Error):
        cmalign.calc(arch="arm64", sets={"CONFIG_ARM64_4K_PAGES": "y", "CONFIG_ARM64_64K_PAGES": "y"})
