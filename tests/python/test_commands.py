"""Every CLI command from Python: the same JSON as the CLI, cmalign.Error with file:line:col,
docstrings, and a .pyi stub that matches the functions."""
import ast
import inspect
import json
import os
import pathlib
import shutil
import subprocess

import pytest

import cmalign

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CMALIGN_CLI")
SEED = ROOT / "examples/boards/upstream-commit-example.dts"
REPO = ROOT / "examples/board-repo"
SIXTEEN_K = dict(sets={"CONFIG_ARM64_16K_PAGES": "y"}, arch="arm64", kernel_version="6.16")
COMMANDS = ["calc", "check", "fix", "suggest", "table", "config", "tree", "pcp", "heap", "map",
            "explain", "boot_check"]


def cli_json(*args, ok=(0, 1)):
    assert CLI, "CMALIGN_CLI names the built program (set by ctest)"
    run = subprocess.run([CLI, *map(str, args), "--format", "json"], capture_output=True,
                         text=True)
    assert run.returncode in ok, run.stderr
    return json.loads(run.stdout)


def test_check_reports_the_seed_pool_on_16k():
    got = cmalign.check(files=[str(SEED)], **SIXTEEN_K)
    errors = [d for d in got["diagnostics"] if d["severity"] == "error"]
    assert [d["check"] for d in errors] == ["cma-size-alignment"]
    assert errors[0]["file"] == str(SEED) and errors[0]["line"] == 24
    assert errors[0]["fix"] == {"property": "size", "old": 0x400000, "new": 0x2000000}
    assert got["alignment"]["cma_min_alignment_bytes"] == 16384 << 11
    # No complete configuration: CONFIG_CMA is assumed y (the way that surfaces the problem), said so.
    assert any(a.startswith("CONFIG_CMA not in the inputs") and "assumed y" in a
               for a in got["alignment"]["assumptions"])
    assert got == cli_json("check", SEED, "--arch", "arm64", "--kernel-version", "6.16",
                           "--set", "CONFIG_ARM64_16K_PAGES=y")


def test_check_directory_with_includes_and_affected_by():
    args = dict(files=[REPO / "boards"], include_dirs=[REPO / "include"],
                configs=[REPO / "configs/acme_defconfig", REPO / "configs/16k.config"],
                kernel_version="6.12")
    got = cmalign.check(**args)
    assert got == cli_json("check", REPO / "boards", "-I", REPO / "include", "-c",
                           REPO / "configs/acme_defconfig", "-c", REPO / "configs/16k.config",
                           "--kernel-version", "6.12")
    inputs = {pathlib.Path(r["input"]).name for r in got["regions"]}
    assert inputs == {"acme-evk.dts", "acme-mini.dts", "beta-board.dts"}
    only = cmalign.check(affected_by=[REPO / "boards/acme-soc.dtsi"], **args)
    assert {pathlib.Path(r["input"]).name for r in only["regions"]} == {"acme-evk.dts",
                                                                        "acme-mini.dts"}


def test_bad_input_raises_error_naming_file_line(tmp_path):
    bad = tmp_path / "bad.dts"
    bad.write_text("/dts-v1/;\n/ {\n\treserved-memory {\n\t\tpool { size = <0x400000> };\n};\n")
    with pytest.raises(cmalign.Error) as err:
        cmalign.check(files=[bad], arch="arm64")
    assert str(err.value).startswith(f"{bad}:4:")
    assert err.value.file == str(bad) and err.value.line == 4 and err.value.column > 0
    assert isinstance(err.value, ValueError)


def test_unknown_keyword_is_a_type_error_and_bad_values_raise():
    with pytest.raises(TypeError):
        cmalign.calc(arhc="arm64")
    # ... and a cmalign.Error listing the valid keywords, like an unknown JSON key.
    with pytest.raises(cmalign.Error,
                       match=r"unknown keyword 'arhc' \(did you mean 'arch'\?\); valid keywords: .*arch"):
        cmalign.calc(arhc="arm64")
    result, error = cmalign._cmalign.run("calc", '{"arhc": "arm64"}')
    assert result is None and "unknown key 'arhc' (did you mean 'arch'?)" in error
    with pytest.raises(cmalign.Error, match="must be a string"):
        cmalign.calc(arch=64)
    with pytest.raises(cmalign.Error, match="no such file"):
        cmalign.check(files=["/no/such/board.dts"], arch="arm64")


def test_fix_diff_is_the_cli_diff_and_writes_nothing(tmp_path):
    board = tmp_path / "seed.dts"
    shutil.copy(SEED, board)
    before = board.read_bytes()
    got = cmalign.fix(board, diff=True, **SIXTEEN_K)
    assert board.read_bytes() == before
    assert "-\t\t\tsize = <0x0 0x400000>; /* 4 MiB */" in got["diff"]
    assert "+\t\t\tsize = <0x0 0x2000000>; /* 4 MiB */" in got["diff"]
    run = subprocess.run([CLI, "fix", board, "--diff", "--arch", "arm64", "--kernel-version",
                          "6.16", "--set", "CONFIG_ARM64_16K_PAGES=y"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout.split("\n", 2)[2] == got["diff"].split("\n", 2)[2]  # past the file headers
    with pytest.raises(cmalign.Error, match="at most one"):
        cmalign.fix(board, diff=True, in_place=True)


def test_suggest_table_config_tree_match_the_cli():
    assert cmalign.suggest(files=[SEED], **SIXTEEN_K) == cli_json(
        "suggest", SEED, "--arch", "arm64", "--kernel-version", "6.16", "--set",
        "CONFIG_ARM64_16K_PAGES=y")
    assert cmalign.suggest(target_alignment="4M", **SIXTEEN_K) == cmalign.suggest(
        target_alignment=4 << 20, **SIXTEEN_K)
    assert cmalign.table(arch="arm64", kernel_version="6.16") == cli_json(
        "table", "--arch", "arm64", "--kernel-version", "6.16")
    config = REPO / "configs/acme_defconfig"
    assert cmalign.config(configs=[config]) == cli_json("config", "-c", config)
    assert cmalign.tree(SEED, path="/reserved-memory") == cli_json(
        "tree", SEED, "--path", "/reserved-memory")
    assert "shared-dma-pool" in cmalign.tree(SEED, format="dts")["dts"]


def test_every_command_has_a_docstring_and_a_stub():
    stub = ast.parse((pathlib.Path(cmalign.__file__).with_suffix(".pyi")).read_text())
    stubs = {f.name: f for f in stub.body if isinstance(f, ast.FunctionDef)}
    for name in COMMANDS:
        function = getattr(cmalign, name)
        assert function.__doc__ and len(function.__doc__) > 40, name
        params = list(inspect.signature(function).parameters)
        stub_args = stubs[name].args
        assert [a.arg for a in stub_args.args + stub_args.kwonlyargs] == params, name
    assert set(cmalign.__all__) >= set(COMMANDS) | {"Error", "__version__"}
    assert set(cmalign._cmalign.commands()) == set(COMMANDS)


def test_limits_are_raised_by_name_and_refused_when_unknown(tmp_path):
    deep = tmp_path / "deep.dts"
    depth = 300  # over the default node-depth of 256
    deep.write_text("/dts-v1/;\n/ {\n" + "n {\n" * depth + "};\n" * depth + "};\n")
    with pytest.raises(cmalign.Error) as err:
        cmalign.check(files=[deep], arch="arm64", kernel_version="6.12")
    assert err.value.file == str(deep) and err.value.line == 258
    # In the words of the call (a keyword), not of the command line.
    assert 'limits={"node-depth": N} raises it' in str(err.value)
    assert "--limit" not in str(err.value)
    got = cmalign.check(files=[deep], arch="arm64", kernel_version="6.12",
                        limits={"node-depth": 400})
    assert got["summary"]["errors"] == 0
    with pytest.raises(cmalign.Error, match="unknown limit 'wombats'"):
        cmalign.check(files=[deep], arch="arm64", limits={"wombats": 1})
    with pytest.raises(cmalign.Error, match="above the largest allowed value 2000"):
        cmalign.tree(deep, limits={"node-depth": 100000})


def test_the_stub_is_generated_from_the_definitions():
    committed = (ROOT / "bindings/python/cmalign/__init__.pyi").read_text()
    assert committed == cmalign._stub_text(), "stale: run scripts/regen-reference"


def test_one_board_or_a_string_for_files_and_bad_boards_inside_the_result(tmp_path):
    # `files` takes a string as a list of one (not its characters).
    one = cmalign.check(str(SEED), **SIXTEEN_K)
    assert one == cmalign.check(files=[SEED], **SIXTEEN_K)
    assert one["summary"]["boards"] == 1
    # One unreadable board among several: its error beside the other board's findings, as the
    # CLI's JSON has it; only nothing readable is an exception.
    boards = tmp_path / "boards"
    boards.mkdir()
    shutil.copy(SEED, boards / "good.dts")
    (boards / "bad.dts").write_text("/dts-v1/;\n/ { oops\n")
    got = cmalign.check(boards, **SIXTEEN_K)
    cli = cli_json("check", boards, "--arch", "arm64", "--kernel-version", "6.16", "--set",
                   "CONFIG_ARM64_16K_PAGES=y", ok=(2,))
    assert got == cli
    assert got["summary"]["boards"] == 2
    errors = [d for d in got["diagnostics"] if d["check"] is None]
    assert len(errors) == 1 and errors[0]["file"] == str(boards / "bad.dts")
    assert any(d["check"] == "cma-size-alignment" for d in got["diagnostics"])
    with pytest.raises(cmalign.Error):
        cmalign.check(boards / "bad.dts", **SIXTEEN_K)


def test_a_bool_symbol_given_a_number_is_an_error_not_a_silent_default():
    with pytest.raises(cmalign.Error, match="CONFIG_ARM64_16K_PAGES=1: a bool symbol takes y, m or n"):
        cmalign.calc(arch="arm64", kernel_version="6.16", sets={"CONFIG_ARM64_16K_PAGES": 1})
    assert cmalign.calc(arch="arm64", kernel_version="6.16",
                        sets={"CONFIG_ARM64_16K_PAGES": True})["page_size"] == 16384


def test_the_library_reads_no_arch_from_the_environment(monkeypatch):
    monkeypatch.setenv("ARCH", "riscv")
    got = cmalign.calc(kernel_version="6.12", sets={"CONFIG_ARM64": "y"})
    assert got["arch"] == "arm64"


def test_map_and_the_overlays_of_every_tree_command(tmp_path):
    layout = cmalign.map(SEED, **SIXTEEN_K)
    assert layout == cli_json("map", SEED, "--arch", "arm64", "--kernel-version", "6.16", "--set",
                              "CONFIG_ARM64_16K_PAGES=y")
    overlay = tmp_path / "extra.dtso"
    overlay.write_text('/dts-v1/;\n/plugin/;\n/ { fragment@0 { target-path = "/reserved-memory";'
                       ' __overlay__ { extra { compatible = "shared-dma-pool"; reusable; '
                       'size = <0x0 0x400000>; }; }; }; };\n')
    tree = cmalign.tree(SEED, overlays=overlay, path="/reserved-memory")
    assert any(n["path"] == "/reserved-memory/extra" for n in tree["nodes"])
    fixed = cmalign.fix(SEED, overlays=[overlay], **SIXTEEN_K)
    assert "edits" in fixed
    assert cmalign.suggest(SEED, overlays=[overlay], **SIXTEEN_K)["suggestions"]
