#!/usr/bin/python3
"""Compare cmalign's built-in DTS preprocessor with gcc's cpp over a kernel tree.

For every board (.dts) under <tree>/arch/<arch>/boot/dts, runs
  cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp -P -I <tree>/scripts/dtc/include-prefixes
(the kernel's scripts/Makefile.dtbs flags) and `example_dts_cpp --kernel-tree <tree>`, and
compares the two outputs token by token (whitespace-insensitive). Prints how many match, the
first differences, and the time of each side (cpp: one process per board, as the kernel build
does; ours: one process for all boards sharing the file cache), both as CPU time.

usage: tests/differential/compare-preprocessor.py [--tree DIR] [--arch arm64,arm,...] [--limit N]
                                       [--tool build/examples/example_dts_cpp] [--jobs N]
"""
import argparse
import concurrent.futures
import glob
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_][A-Za-z0-9_]*|[0-9.][A-Za-z0-9_.]*|\S')


def tokens(text):
    return TOKEN.findall(text)


def run_cpp(tree, path):
    cmd = ["cpp", "-nostdinc", "-undef", "-D__DTS__", "-x", "assembler-with-cpp", "-P",
           "-I", os.path.join(tree, "scripts/dtc/include-prefixes"), path]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default="/opt/cmalign/ksrc/linux-source-6.12")
    ap.add_argument("--arch", default="")
    ap.add_argument("--limit", type=int, default=0, help="only the first N boards (spread over the list)")
    ap.add_argument("--tool", default=os.path.join(here, "..", "..", "build", "examples", "example_dts_cpp"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--show", type=int, default=10, help="differences to print")
    args = ap.parse_args()

    archs = args.arch.split(",") if args.arch else ["*"]
    boards = []
    for arch in archs:
        boards += glob.glob(os.path.join(args.tree, "arch", arch, "boot/dts/**/*.dts"), recursive=True)
    boards.sort()
    if args.limit and len(boards) > args.limit:
        step = len(boards) / args.limit
        boards = [boards[int(i * step)] for i in range(args.limit)]
    if not boards:
        print("no boards found under", args.tree)
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        listing = os.path.join(tmp, "files")
        with open(listing, "w") as f:
            f.write("\n".join(boards) + "\n")
        t0 = time.monotonic()
        ours = subprocess.run([args.tool, "--kernel-tree", args.tree, "--out-dir", tmp, "--time", "--files", listing],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ours_wall = time.monotonic() - t0
        our_errors = ours.stderr.decode("utf-8", "replace")
        m = re.search(r"preprocess: \d+ files, ([0-9.]+) ms, cpu ([0-9.]+) ms", our_errors)
        ours_ms = float(m.group(2)) if m else ours_wall * 1000

        t0 = time.monotonic()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            cpp_results = list(pool.map(lambda b: run_cpp(args.tree, b), boards))
        cpp_wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpp_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)

        match = 0
        both_fail = 0
        shown = 0
        for n, board in enumerate(boards):
            rc, expected, err = cpp_results[n]
            out_path = os.path.join(tmp, "%d.i" % n)
            got = open(out_path, encoding="utf-8", errors="replace").read() if os.path.exists(out_path) else None
            if rc != 0:
                if got is None:
                    both_fail += 1
                    continue
                if shown < args.show:
                    print("DIFF %s: cpp failed, ours succeeded: %s" % (board, err.strip().splitlines()[:1]))
                    shown += 1
                continue
            if got is None:
                if shown < args.show:
                    lines = [l for l in our_errors.splitlines() if board in l or l.startswith(os.path.dirname(board))]
                    print("DIFF %s: ours failed: %s" % (board, lines[:1]))
                    shown += 1
                continue
            a, b = tokens(expected), tokens(got)
            if a == b:
                match += 1
                continue
            if shown < args.show:
                i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
                print("DIFF %s: token %d: cpp %r, ours %r" % (board, i, a[max(0, i - 5):i + 5], b[max(0, i - 5):i + 5]))
                shown += 1

    total = len(boards)
    print("boards: %d  identical tokens: %d  both rejected: %d  different: %d" %
          (total, match, both_fail, total - match - both_fail))
    # CPU time, not wall time: the machine may be shared. cpp's includes its process start-up,
    # which is part of what a cpp+dtc pipeline pays per board.
    print("cpp: %.2f s CPU (%.2f ms/board, %.1f s wall with %d jobs)   ours: %.3f s CPU in preprocess() "
          "(%.3f ms/board, one thread, shared file cache)" %
          (cpp_cpu, cpp_cpu * 1000 / total, cpp_wall, args.jobs, ours_ms / 1000, ours_ms / total))
    print("speed ratio cpp/ours (CPU per board): %.1fx" % (cpp_cpu / (ours_ms / 1000)))
    return 0 if match + both_fail == total else 1


if __name__ == "__main__":
    sys.exit(main())
