"""cmalign.pcp and cmalign.heap give the CLI's JSON; the RZ/G3S figures derived by hand."""
import json
import os
import pathlib
import subprocess

import pytest

import cmalign

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/data/pcp"
CLI = os.environ.get("CMALIGN_CLI")
ZONEINFO = str(DATA / "x86_64-6.18-vm.zoneinfo")
CONFIG = str(DATA / "x86_64-6.18-vm.config")
SYSCTL = str(DATA / "x86_64-6.18-vm.sysctl")


def test_running_kernel_fixture_matches():
    got = cmalign.pcp(zoneinfo=ZONEINFO, configs=[CONFIG], sysctl_file=SYSCTL)
    assert got["comparison"]["matches"], got["comparison"]["differences"]
    assert got["min_free_kbytes"] == 67584  # 512 pages * 3 zones * 11 = 16896 pages
    assert [z["name"] for z in got["zones"]] == ["DMA", "DMA32", "Normal"]
    normal = got["zones"][2]
    # The keys of docs/json.md, top level = the largest zone (Normal).
    for key in ("page_size", "managed_pages", "batch", "scale_max", "max_pages_per_lock",
                "high_min", "high_max", "min_free_kbytes", "watermarks", "by_scale", "zones"):
        assert key in got
    assert got["managed_pages"] == normal["managed_pages"] == 1900544
    assert got["batch"] == 63 and got["max_pages_per_lock"] == 63 << 5
    assert normal["high_min"] == 14992 // 2 and normal["high_max"] == 1900544 // 8 // 2
    assert normal["watermarks"] == {"min": 11994, "low": 14992, "high": 17990, "promo": 20988}
    assert [r["scale"] for r in got["by_scale"]] == list(range(7))
    assert all(s["differs"] is False for s in got["sysctls"])


def test_changed_sysctl_is_reported():
    # DMA's ratio 128 instead of 256: DMA's protection against DMA32 would be 772915 / 128 =
    # 6038, the board reports 3019 (it runs with 256).
    got = cmalign.pcp(zoneinfo=ZONEINFO, configs=[CONFIG],
                      sysctls={"vm.lowmem_reserve_ratio": [128, 256, 32, 0, 0]})
    assert got["sysctls"][0]["differs"]
    assert got["sysctls"][0]["kernel_default"] == "256 256 32 0 0"
    assert not got["comparison"]["matches"]
    diffs = {(d["zone"], d["field"]): (d["reported"], d["computed"])
             for d in got["comparison"]["differences"]}
    assert diffs[("DMA", "lowmem_reserve[1]")] == (3019, 6038)
    assert all(zone == "DMA" for zone, _ in diffs)


def test_rzg3s_figures():
    got = cmalign.pcp(memory="1G", memory_base=0x48000000, cpus=1, arch="arm64",
                      kernel_version="6.12", sets={"CONFIG_ARM64_4K_PAGES": "y"})
    assert got["batch"] == 63
    assert got["by_scale"][5]["max_pages_per_lock"] == 2016
    assert got["by_scale"][0]["max_pages_per_lock"] == 63
    assert got["by_scale"][5]["max_bytes_per_lock"] == 2016 * 4096
    assert any("memmap" in a for a in got["assumptions"])
    vendor = cmalign.pcp(memory="1G", cpus=1, arch="arm64", kernel_version="6.12",
                         bootargs="pcp_batch_scale_max=0", vendor_params=["pcp_batch_scale_max"])
    assert vendor["max_pages_per_lock"] == 63 and vendor["scale_max"] == 0
    sixteen = cmalign.pcp(memory="8G", arch="arm64", kernel_version="6.12",
                          sets={"CONFIG_ARM64_16K_PAGES": "y"})
    assert sixteen["page_size"] == 16384 and sixteen["batch"] == 15


def test_heap_plans():
    four = cmalign.heap(10 << 20, arch="arm64", kernel_version="6.12")
    assert [(c["order"], c["count"]) for c in four["chunks"]] == [(8, 10), (4, 0), (0, 0)]
    assert four["sg_entries"] == 10 and four["orders"] == [8, 4, 0]
    sixteen = cmalign.heap("10M", arch="arm64", kernel_version="6.12",
                           sets={"CONFIG_ARM64_16K_PAGES": "y"})
    assert [(c["order"], c["count"]) for c in sixteen["chunks"]] == [(8, 2), (4, 8), (0, 0)]
    old = cmalign.heap("10M", arch="arm64", kernel_version="6.1")
    new = cmalign.heap("10M", arch="arm64", kernel_version="6.12")
    assert [c["reclaim"] for c in old["chunks"]] == [False, True, True]
    assert [c["reclaim"] for c in new["chunks"]] == [False, False, True]
    with pytest.raises(cmalign.Error, match="EINVAL"):
        cmalign.heap(0, arch="arm64")


def test_bad_zoneinfo_raises_with_location(tmp_path):
    bad = tmp_path / "zoneinfo"
    bad.write_text("Node 0, zone   Normal\n        managed  lots\n")
    with pytest.raises(cmalign.Error, match=r"zoneinfo:2:\d+: error"):
        cmalign.pcp(zoneinfo=str(bad), arch="arm64")


@pytest.mark.skipif(not CLI, reason="CMALIGN_CLI not set (run through ctest)")
def test_cli_json_equals_python():
    out = subprocess.run([CLI, "pcp", "--zoneinfo", ZONEINFO, "-c", CONFIG, "--sysctl-file",
                          SYSCTL, "--format", "json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == cmalign.pcp(zoneinfo=ZONEINFO, configs=[CONFIG],
                                                 sysctl_file=SYSCTL)
    heap = subprocess.run([CLI, "heap", "--size", "0", "--arch", "arm64"], capture_output=True,
                          text=True)
    assert heap.returncode == 2 and "EINVAL" in heap.stderr
