#!/usr/bin/python3
"""Every board of a kernel tree with its own SoC defconfig, derived from the tree, and `cmalign
check` of each board with that defconfig: the dynamic-no-room errors and warnings per tree.

  soc-defconfig-boards.py map   --tree T [--arch A ...]                      board<TAB>defconfig
  soc-defconfig-boards.py check --tree T --cmalign BIN [--arch A ...] [--only REGEX]
                                [--fail-on-assumed-error] [--jobs N]

The mapping is the kernel's own: a Makefile under arch/A/boot/dts has `dtb-$(CONFIG_X) +=
board.dtb` lines, and a defconfig builds the board when its configuration sets CONFIG_X=y. The
configuration is the defconfig as the tree's Kconfig completes it (`cmalign config`, which
evaluates Kconfig as make olddefconfig does), so symbols a platform selects or defaults on count
(sunxi_defconfig sets ARCH_SUNXI; MACH_SUN8I, which builds the sun8i boards, defaults to y).

A defconfig is a board's *own SoC defconfig* when it builds the board and is not a
multi-platform one. Multi-platform is measured, not listed: a defconfig that builds more than
--generic-share (default 0.3) of the arch's boards (arm's multi_v7_defconfig, arm64's and riscv's
defconfig) is one. A board built by several SoC defconfigs is checked with each.

`check` runs `cmalign check --format json` on each defconfig's boards (the tree's DTS sources,
the tree as --kernel-tree), and prints per arch: boards, defconfigs, dynamic-no-room errors and
warnings, and each error (board, node, the message's end). Each error is checked again with a
kernel that takes no RAM (`--kernel-image 0x0,0x1000`, a known place outside the banks): one
that goes away then rested on the assumed kernel image alone, which must never be an error;
--fail-on-assumed-error exits 1 on any. A run where a defconfig or board cannot be checked
exits 2.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys

DTB_LINE = re.compile(r"^dtb-\$\(CONFIG_([A-Za-z0-9_]+)\)\s*[+:]?=\s*(.*)$")


def makefile_lines(path):
    """The logical lines of a Makefile: continuations joined, comments dropped."""
    text = path.read_text(errors="replace")
    text = re.sub(r"\\\n", " ", text)
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            yield line


def boards_of(tree, arch):
    """{board .dts path relative to the tree: {CONFIG symbols whose dtb- line names it}}."""
    root = tree / "arch" / arch / "boot" / "dts"
    out = collections.defaultdict(set)
    if not root.is_dir():
        return out
    for makefile in sorted(root.rglob("Makefile")):
        for line in makefile_lines(makefile):
            m = DTB_LINE.match(line)
            if not m:
                continue
            for word in m.group(2).split():
                if not word.endswith(".dtb"):
                    continue  # overlays (.dtbo), variables, composite -dtbs targets
                source = makefile.parent / (word[: -len(".dtb")] + ".dts")
                if source.is_file():
                    out[str(source.relative_to(tree))].add(m.group(1))
    return out


def defconfigs_of(tree, arch):
    configs = tree / "arch" / arch / "configs"
    if not configs.is_dir():
        return []
    return sorted(p for p in configs.iterdir()
                  if p.is_file() and (p.name == "defconfig" or p.name.endswith("_defconfig")))


def enabled_symbols(cmalign, tree, arch, defconfig):
    """CONFIG_ symbols set to y once the tree's Kconfig completes the defconfig."""
    run = subprocess.run([cmalign, "config", "--kernel-tree", str(tree), "--arch", arch,
                          "-c", str(defconfig)], capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1:] or ["exit %d" % run.returncode]
    on = set()
    for line in run.stdout.splitlines():
        m = re.match(r"^CONFIG_([A-Za-z0-9_]+)=y$", line)
        if m:
            on.add(m.group(1))
    return on, None


def mapping(cmalign, tree, arch, jobs, generic_share):
    """{defconfig name: [boards]} for the SoC defconfigs, and what could not be evaluated."""
    boards = boards_of(tree, arch)
    defconfigs = defconfigs_of(tree, arch) if boards else []  # nothing to map them to
    failed = {}
    built = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = pool.map(lambda d: (d, enabled_symbols(cmalign, tree, arch, d)), defconfigs)
        for defconfig, (on, error) in results:
            if on is None:
                failed[defconfig.name] = error
                continue
            built[defconfig.name] = sorted(b for b, symbols in boards.items() if symbols & on)
    out = {}
    for name, its_boards in built.items():
        if boards and len(its_boards) > generic_share * len(boards):
            continue  # multi-platform
        if its_boards:
            out[name] = its_boards
    return boards, out, failed


def check(cmalign, tree, arch, defconfig, boards, extra=()):
    """[(board, severity, node, message)] of dynamic-no-room, or an error text."""
    run = subprocess.run([cmalign, "check", "--kernel-tree", str(tree), "--arch", arch,
                          "-c", str(tree / "arch" / arch / "configs" / defconfig),
                          "--format", "json", "-Wno-all", "-Wdynamic-no-room", *extra]
                         + [str(tree / b) for b in boards], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        return None, (run.stderr.strip().splitlines() or ["exit %d" % run.returncode])[-1]
    found = []
    for d in json.loads(run.stdout).get("diagnostics", []):
        if d.get("check") == "dynamic-no-room":
            found.append((d.get("input") or d.get("file", ""), d["severity"], d.get("node", ""),
                          d["message"]))
    return found, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["map", "check"])
    ap.add_argument("--tree", required=True, type=pathlib.Path)
    ap.add_argument("--arch", action="append",
                    help="arm, arm64, riscv, mips, powerpc, loongarch (default: all of them)")
    ap.add_argument("--cmalign", default=str(pathlib.Path(__file__).resolve().parents[2]
                                             / "build" / "cmalign"))
    ap.add_argument("--only", help="check only defconfigs whose name matches this regex")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--generic-share", type=float, default=0.3)
    ap.add_argument("--fail-on-assumed-error", action="store_true")
    args = ap.parse_args()
    tree = args.tree.resolve()
    arches = args.arch or ["arm", "arm64", "riscv", "mips", "powerpc", "loongarch"]
    unusable = False
    remaining_errors = 0
    for arch in arches:
        boards, socs, failed = mapping(args.cmalign, tree, arch, args.jobs, args.generic_share)
        for name, error in sorted(failed.items()):
            print(f"{arch}: {name}: not evaluated: {error}", file=sys.stderr)
        if args.only:
            socs = {k: v for k, v in socs.items() if re.search(args.only, k)}
        if args.mode == "map":
            for name, its_boards in sorted(socs.items()):
                for b in its_boards:
                    print(f"{b}\t{name}")
            continue
        covered = {b for v in socs.values() for b in v}
        errors, warnings = [], 0
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs // 2)) as pool:
            jobs = {pool.submit(check, args.cmalign, tree, arch, name, its_boards): name
                    for name, its_boards in socs.items()}
            for job in concurrent.futures.as_completed(jobs):
                found, error = job.result()
                if found is None:
                    print(f"{arch}: {jobs[job]}: not checked: {error}", file=sys.stderr)
                    unusable = True
                    continue
                for board, severity, node, message in found:
                    if severity == "error":
                        errors.append((jobs[job], board, node, message))
                    elif severity == "warning":
                        warnings += 1
        # Each error again with a kernel that takes no RAM (--kernel-image outside any bank, a
        # known place): an error that then goes away rested on the assumed image alone.
        assumed_only = []
        for name, board, node, message in sorted(errors):
            again, error = check(args.cmalign, tree, arch, name, [board],
                                 ("--kernel-image", "0x0,0x1000"))
            if again is None:
                print(f"{arch}: {name} {board}: not checked again: {error}", file=sys.stderr)
                unusable = True
                continue
            if not any(n == node and sev == "error" for _, sev, n, _ in again):
                assumed_only.append((name, board, node, message))
        print(f"{tree.name} {arch}: {len(boards)} boards, {len(covered)} with an own SoC "
              f"defconfig, {len(socs)} SoC defconfigs; dynamic-no-room: {len(errors)} errors "
              f"({len(assumed_only)} only beside the assumed kernel), {warnings} warnings")
        for name, board, node, message in sorted(errors):
            kind = "ASSUMED-ONLY error" if (name, board, node, message) in assumed_only else "error"
            print(f"  {kind}: {name} {board} {node}: {message[-200:]}")
        remaining_errors += len(assumed_only)
    if unusable or failed:
        return 2
    return 1 if args.fail_on_assumed_error and remaining_errors else 0


if __name__ == "__main__":
    sys.exit(main())
