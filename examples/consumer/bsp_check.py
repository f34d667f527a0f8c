#!/usr/bin/env python3
"""A BSP tool's check step in Python: check the boards against a configuration and, when pools
would be lost, say whether fix can grow them or which configuration keeps them.

Usage: bsp_check.py [-I DIR]... CONFIG... -- BOARD...   (exit 1 when a pool would be rejected, 2 on bad input)
"""
import sys

import cmalign


def main(argv):
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    configs, boards = argv[:split], argv[split + 1:]
    include_dirs = [configs[i + 1] for i, a in enumerate(configs[:-1]) if a == "-I"]
    configs = [c for i, c in enumerate(configs) if c != "-I" and (i == 0 or configs[i - 1] != "-I")]
    tree = dict(include_dirs=include_dirs, kernel_version="6.12")
    try:
        result = cmalign.check(files=boards, configs=configs, **tree)
    except cmalign.Error as error:  # names file:line:col
        print(error, file=sys.stderr)
        return 2
    errors = [d for d in result["diagnostics"] if d["severity"] == "error"]
    print(f"cmalign {cmalign.__version__}: CMA alignment "
          f"{result['alignment']['cma_min_alignment_bytes']} bytes, {len(errors)} error(s)")
    for d in errors:
        print(f"{d['file']}:{d['line']}:{d['column']}: {d['message']} [{d['check']}]")
    if errors:
        plan = cmalign.fix(boards[0], configs=configs, **tree)
        for edit in plan["edits"]:
            print(f"fix would write {edit['new']} for {edit['old']} at {edit['file']}:{edit['line']}")
        best = cmalign.suggest(files=boards, configs=configs, **tree)["suggestions"]
        if best:
            print("or configure:", " ".join(f"{k}={v}" for k, v in best[0]["changes"].items()))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
