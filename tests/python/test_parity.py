"""One command surface: every command x every option of the definitions (cmalign/internal/commands.hpp),
run through the CLI (--format json), the C API (cmalign_run_json) and Python, on fixtures. The
three give the same JSON, or all three fail; a located error names the same place."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

import cmalign

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CMALIGN_CLI")
CAPI = os.environ.get("CMALIGN_CAPI_RUN")
REPO = ROOT / "examples/board-repo"
EVK = str(REPO / "boards/acme-evk.dts")
MINI = str(REPO / "boards/acme-mini.dts")
SOC = str(REPO / "boards/acme-soc.dtsi")
INCLUDE = str(REPO / "include")
DEFCONFIG = str(REPO / "configs/acme_defconfig")
SIXTEEN = str(REPO / "configs/16k.config")
SEED = str(ROOT / "examples/boards/seed-board.dts")
LOG = str(ROOT / "examples/logs/seed-board-16k.dmesg")
PCP = ROOT / "tests/data/pcp"

DEFINITIONS = {d["name"]: d for d in json.loads(cmalign._cmalign.definitions())}

BOARDS = dict(include_dirs=[INCLUDE], configs=[DEFCONFIG, SIXTEEN], kernel_version="6.12")
# What each command needs to run at all; the option under test is added to (or replaces) it.
BASE = {
    "calc": dict(arch="arm64", kernel_version="6.12"),
    "table": dict(arch="arm64", kernel_version="6.12"),
    "config": dict(configs=[DEFCONFIG]),
    "check": dict(files=[EVK, MINI], **BOARDS),
    "tree": dict(file=EVK, include_dirs=[INCLUDE]),
    "fix": dict(files=[EVK], **BOARDS),
    "suggest": dict(files=[EVK], **BOARDS),
    "pcp": dict(memory="4G", arch="x86_64", kernel_version="6.12"),
    "heap": dict(size="10M", arch="arm64", kernel_version="6.12"),
    "map": dict(board=EVK, **BOARDS),
    "explain": dict(log=LOG, board=SEED, configs=[str(ROOT / "examples/configs/arm64-16k.config")]),
}


def option_values(tmp):
    """A fixture value for every key of the definitions."""
    overlay = tmp / "extra-pool.dtso"
    overlay.write_text('/dts-v1/;\n/plugin/;\n/ {\n\tfragment@0 {\n\t\ttarget-path = '
                       '"/reserved-memory";\n\t\t__overlay__ {\n\t\t\textra-pool {\n\t\t\t\t'
                       'compatible = "shared-dma-pool";\n\t\t\t\treusable;\n\t\t\t\t'
                       'size = <0x0 0x400000>;\n\t\t\t};\n\t\t};\n\t};\n};\n')
    fake_tree = tmp / "linux"
    fake_tree.mkdir(exist_ok=True)
    (fake_tree / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\n")
    (fake_tree / "Kconfig").write_text("")
    return {
        "configs": [DEFCONFIG, SIXTEEN], "sets": {"CONFIG_ARM64_16K_PAGES": "y"},
        "unsets": ["CONFIG_CMA_AREAS"], "arch": "arm64", "kernel_version": "6.6",
        "kernel_tree": str(fake_tree), "kconfig_shell": True, "limits": {"node-depth": 400},
        "include_dirs": [INCLUDE], "defines": {"ACME_UNUSED": "1"}, "overlays": [str(overlay)],
        "files": [EVK, MINI], "file": EVK, "bootargs": "cma=64M", "switches": ["-Wno-overlap"],
        "werror": True, "jobs": 1, "affected_by": [SOC], "kernel_image": "0x40200000,48M",
        "sweep_versions": "6.6,6.12", "sweep_page_sizes": "4K,16K",
        "in_place": True, "out": str(tmp / "out.dts"), "diff": True,
        "target_alignment": "4M", "path": "/reserved-memory", "format": "dts",
        "memory": "4G", "memory_base": "0x40000000", "zones": {"DMA32": "3G", "Normal": "1G"},
        "zoneinfo": str(PCP / "x86_64-6.18-vm.zoneinfo"), "cpus": 4,
        "sysctls": {"vm.min_free_kbytes": "67584"},
        "sysctl_file": str(PCP / "x86_64-6.18-vm.sysctl"), "dt": SEED,
        "vendor_params": ["pcp_batch_scale_max"], "size": "6M", "available_order": 4,
        "log": LOG, "board": MINI, "cache_dir": str(tmp / "cache"),
    }


def cases():
    out = []
    for name, definition in DEFINITIONS.items():
        if name == "boot-check":
            continue  # boots QEMU: its front ends are compared in tests/boot and json_api_test
        keys = [o["key"] for o in definition["options"] if o["surface"] == "both"]
        for key in keys:
            out.append(pytest.param(name, key, id=f"{name}-{key}"))
    return out


def cli_words(name, request):
    """The request as a command line, through the definitions' flags."""
    options = {o["key"]: o for o in DEFINITIONS[name]["options"]}
    words, inputs = [CLI, name], []
    for key, value in request.items():
        o = options[key]
        values = value if isinstance(value, list) else [value]
        if o["positional"]:
            inputs += values
            continue
        flag = o["flags"].split(",")[-1]
        if o["type"] == "flag":
            words += [flag] if value else []
        elif o["type"] == "switch":
            words += values  # "-Wno-overlap" as written
        elif o["type"] == "assignment":
            words += [w for k, v in value.items() for w in (flag, f"{k}={v}")]
        else:
            for v in values:
                words += [flag, str(v)]
    if "format" not in request:
        words += ["--format", "json"]
    return words + ["--"] + inputs


def run_cli(name, request, cwd):
    run = subprocess.run(cli_words(name, request), capture_output=True, text=True, cwd=cwd)
    try:
        result = json.loads(run.stdout) if run.stdout.strip() else None
    except json.JSONDecodeError:
        result = {"text": run.stdout}  # tree --format dts prints the DTS itself
    return run.returncode, result, run.stderr


def run_capi(name, request, cwd):
    run = subprocess.run([CAPI, name, json.dumps(request)], capture_output=True, text=True,
                         cwd=cwd)
    return (json.loads(run.stdout), None) if run.returncode == 0 else (None, run.stderr.strip())


def run_python(name, request, cwd):
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return getattr(cmalign, name)(**request), None
    except cmalign.Error as error:
        return None, str(error)
    finally:
        os.chdir(here)


@pytest.mark.parametrize("name,key", cases())
def test_cli_c_and_python_agree(name, key, tmp_path):
    assert CLI and CAPI, "CMALIGN_CLI and CMALIGN_CAPI_RUN name the built programs (set by ctest)"
    values = option_values(tmp_path)
    request = dict(BASE[name])
    if key in ("zones", "zoneinfo"):
        request.pop("memory")  # exactly one description of the memory
    if key == "file":
        request.pop("files", None)
    if key == "sweep_page_sizes":
        request["sweep_versions"] = values["sweep_versions"]
    request[key] = values[key]
    # Every front end runs on its own fresh copy of the board repository (fix may write), at
    # the same path, so the results are comparable and nothing in the source tree is touched.
    copy = tmp_path / "board-repo"

    def relocate(value):
        if isinstance(value, list):
            return [relocate(v) for v in value]
        if isinstance(value, str) and value.startswith(str(REPO)):
            return str(copy) + value[len(str(REPO)):]
        return value

    request = {k: relocate(v) for k, v in request.items()}

    def fresh():
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(REPO, copy)
        (tmp_path / "out.dts").unlink(missing_ok=True)

    fresh()
    code, cli_result, cli_err = run_cli(name, request, tmp_path)
    fresh()
    c_result, c_error = run_capi(name, request, tmp_path)
    fresh()
    py_result, py_error = run_python(name, request, tmp_path)

    # C and Python are the same call: identical.
    assert c_result == py_result
    assert c_error == py_error

    if c_error is not None:
        # A bad request or no readable input: the CLI fails too (exit 2) and names the same
        # place when the error has one.
        assert code == 2, (cli_words(name, request), c_error)
        location = re.match(r"^(.*?:\d+:\d+): error: ", c_error)
        if location and not location.group(1).startswith("<request>"):
            assert location.group(1) in cli_err, (c_error, cli_err)
        return
    assert code in (0, 1, 2), cli_err
    expected = dict(c_result)
    if name == "fix" and key == "diff":
        diff = expected.pop("diff")  # the CLI prints it on stderr beside the JSON
        assert diff and diff in cli_err
    if name == "tree" and key == "format":
        assert cli_result == {"text": expected["dts"]}
        return
    assert cli_result == expected, (cli_words(name, request), cli_err)


def test_the_source_tree_is_untouched():
    # Runs after the parity cases (file order): fix --in-place there wrote only to copies.
    status = subprocess.run(["git", "status", "--porcelain", "--", str(REPO)], cwd=ROOT,
                            capture_output=True, text=True)
    if status.returncode == 0:
        assert status.stdout == ""


def test_every_definition_key_is_covered(tmp_path):
    values = option_values(tmp_path)
    for name, definition in DEFINITIONS.items():
        if name == "boot-check":
            continue  # not walked (see cases())
        assert name in BASE
        for o in definition["options"]:
            if o["surface"] == "both":
                assert o["key"] in values, (name, o["key"])
