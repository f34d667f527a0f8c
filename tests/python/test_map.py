"""`cmalign map --format svg` rendered to PNG with Debian's rsvg-convert (librsvg2-bin).

The SVG must be valid XML that librsvg draws; the PNG must have the picture's size and show the
rejected pools in the "rejected" red. The text labels are checked in the SVG itself (a PNG holds
no text). PNG pixels are decoded with the standard library (zlib + the PNG filters), so no
imaging package is needed.
"""

import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOARD = ROOT / "examples" / "boards" / "seed-board.dts"
CLI = os.environ.get("CMALIGN_CLI", "cmalign")
REJECTED = (0xD6, 0x27, 0x28)  # #d62728, the legend's "rejected by the kernel"
SVG_NS = "{http://www.w3.org/2000/svg}"


def rsvg():
    path = shutil.which("rsvg-convert")
    # Not a skip: the tool is a declared dependency (scripts/install-deps, librsvg2-bin).
    assert path, "rsvg-convert not found: install librsvg2-bin (scripts/install-deps)"
    return path


def read_png(path):
    """(width, height, rows of (r, g, b, a)) of an 8-bit RGB/RGBA non-interlaced PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
            channels = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows, channels


def count_colour(rows, channels, rgb, tolerance=6):
    n = 0
    for row in rows:
        for x in range(0, len(row), channels):
            if all(abs(row[x + k] - rgb[k]) <= tolerance for k in range(3)):
                n += 1
    return n


def render(tmp_path, config):
    svg = tmp_path / f"{config}.svg"
    png = tmp_path / f"{config}.png"
    proc = subprocess.run(
        [CLI, "map", str(BOARD), "-c", str(ROOT / "examples" / "configs" / f"{config}.config"),
         "--format", "svg", "-o", str(svg)],
        capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    subprocess.run([rsvg(), "-o", str(png), str(svg)], check=True)
    return svg, png, proc.returncode


def test_svg_renders_to_png_with_labels_and_rejected_pools(tmp_path):
    svg, png, code = render(tmp_path, "arm64-16k")
    assert code == 1  # the kernel rejects something shown
    root = ET.parse(svg).getroot()  # well-formed XML
    width = float(root.get("width"))
    height = float(root.get("height"))
    texts = " ".join("".join(t.itertext()) for t in root.iter(SVG_NS + "text"))
    for label in ("camera-pool@50000000", "vdec-pool", "firmware@4f000000", "memory@40000000",
                  "Legend", "rejected by the kernel", "fix: size 4 MiB → 32 MiB",
                  "CMA alignment 32 MiB"):
        assert label in texts, label

    w, h, rows, channels = read_png(png)
    assert (w, h) == (round(width), round(height))
    assert w == 1000 and 400 < h < 2000
    red_16k = count_colour(rows, channels, REJECTED)

    # The same board on the 4K kernel: nothing rejected, so only the legend's red remains.
    _, png4k, code4k = render(tmp_path, "arm64-4k")
    assert code4k == 0
    _, _, rows4k, channels4k = read_png(png4k)
    red_4k = count_colour(rows4k, channels4k, REJECTED)
    assert red_4k > 0  # the legend swatch
    assert red_16k - red_4k > 1500, (red_16k, red_4k)


def test_text_map_fits_80_columns():
    proc = subprocess.run(
        [CLI, "map", str(BOARD), "-c", str(ROOT / "examples" / "configs" / "arm64-16k.config")],
        capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) > 8
    assert max(len(line) for line in lines) <= 80
    assert any("camera-pool@50000000" in line for line in lines)


def test_bad_board_is_exit_2(tmp_path):
    bad = tmp_path / "bad.dts"
    bad.write_text("/dts-v1/;\n/ { x = <1 2; };\n")
    proc = subprocess.run([CLI, "map", str(bad), "--arch", "arm64", "--kernel-version", "6.12"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "bad.dts:2:" in proc.stderr


def test_readme_picture_is_current():
    """docs/seed-board-16k-map.svg (shown in the README) is what `map` draws today."""
    proc = subprocess.run(
        [CLI, "map", "examples/boards/seed-board.dts", "-c", "examples/configs/arm64-16k.config",
         "--format", "svg"],
        capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    committed = (ROOT / "docs" / "seed-board-16k-map.svg").read_text()
    assert proc.stdout == committed, "regenerate docs/seed-board-16k-map.svg (see README)"
