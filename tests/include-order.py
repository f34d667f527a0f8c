#!/usr/bin/python3
"""Every #include of src/ and include/ goes down the layer order of docs/architecture.md.

The order is read from the line of docs/architecture.md that starts with "Layer order:"
("core < kconfig < … < fix = calc = map < … < cli = capi"; `<` a layer above, `=` the same rank).
A file belongs to the layer named by its directory: src/<layer>/, include/cmalign/<layer>/,
src/private/cmalign/internal/<layer>/; the headers directly in include/cmalign/ and
src/private/cmalign/internal/ are the api's (cmalign.h the C API's), the generated cmalign/version.hpp is core's. A quoted
include is resolved as the compiler does (beside the file, then include/, src/private/, src/).
An include of a higher rank, or one that resolves to no file, is an error.

A layer's private headers have one place: beside its sources (src/<layer>/) or in
src/private/cmalign/internal/<layer>/, not both; a layer with headers in both is an error too.

Usage: include-order.py SOURCE_DIR     (exit 0 clean, 1 on a violation or a bad doc)
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_order(doc: Path):
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("Layer order:"):
            text = line[len("Layer order:"):].strip().strip("`").split("`")[0]
            rank = {}
            for i, group in enumerate(text.split("<")):
                for name in group.split("="):
                    if name.strip():
                        rank[name.strip()] = i
            return rank
    sys.exit(f"include-order: no 'Layer order:' line in {doc}")


def layer_of(path: Path, root: Path):
    rel = path.relative_to(root).parts
    if rel[:2] == ("src", "private"):
        rel = rel[4:]  # src/private/cmalign/internal/<layer>/…
        return rel[0] if len(rel) > 1 else "api"
    if rel[0] == "src":
        return rel[1]
    if rel[0] == "include":
        rel = rel[2:]  # include/cmalign/<layer>/…
        if len(rel) > 1:
            return rel[0]
        return "capi" if rel[0] == "cmalign.h" else "api"
    return None


def resolve(name: str, src: Path, root: Path):
    if name == "cmalign/version.hpp":
        return "core"
    for base in (src.parent, root / "include", root / "src/private", root / "src"):
        candidate = base / name
        if candidate.is_file():
            return layer_of(candidate.resolve(), root)
    return None


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    rank = read_order(root / "docs/architecture.md")
    files = sorted(p for d in ("src", "include") for p in (root / d).rglob("*")
                   if p.suffix in (".cpp", ".hpp", ".h", ".inc") and p.is_file())
    bad = 0
    for f in files:
        own = layer_of(f, root)
        if own not in rank:
            print(f"{f.relative_to(root)}: layer '{own}' is not in the layer order")
            bad += 1
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        for m in INCLUDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            target = resolve(m.group(1), f, root)
            if target is None or target not in rank:
                print(f"{f.relative_to(root)}:{line}: \"{m.group(1)}\" resolves to no layer")
                bad += 1
            elif rank[target] > rank[own]:
                print(f"{f.relative_to(root)}:{line}: {own} includes \"{m.group(1)}\" of {target}, "
                      f"a layer above it")
                bad += 1
    beside, private = {}, {}
    for f in files:
        rel = f.relative_to(root).parts
        if f.suffix != ".hpp" or rel[0] != "src":
            continue
        place = private if rel[1] == "private" else beside
        place.setdefault(layer_of(f, root), []).append(f.relative_to(root))
    for layer in sorted(set(beside) & set(private)):
        print(f"{layer}: private headers in two places: {beside[layer][0]} beside the sources "
              f"and {private[layer][0]} in src/private")
        bad += 1
    print(f"{len(files)} files, {bad} include(s) or header place(s) against the layer order")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
