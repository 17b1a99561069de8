"""The house in numbers, for anyone to rerun: files per folder, the largest
modules, classes and functions, import circles, the README's length and
the guide's pages.

    python tools/rooms.py            # the summary
    python tools/rooms.py --over     # and every room over its size

A folder of over 15 modules, a module over ~600 lines, a class over 500
(the App over 150) or a function over 100 is a room to split along its
seams (see docs/architecture.md).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMITS = {"module": 600, "class": 500, "function": 100}
#: Modules in one folder (``__init__.py`` not counted), and the App's lines:
#: what it does beyond wiring the screens belongs in them.
FOLDER_LIMIT = 15
APP_LIMIT = 150


def rooms(package: Path) -> list[tuple[str, str, int]]:
    """(kind, name, lines) of every module, class and function under ``package``."""
    found: list[tuple[str, str, int]] = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text()
        where = path.relative_to(ROOT).as_posix()
        found.append(("module", where, len(text.splitlines())))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                found.append((kind, f"{where}:{node.lineno} {node.name}", lines))
    return found


def circles(package: str) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others
    (imports for type checking included)."""
    import grimp

    graph = grimp.build_graph(package)
    imports = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, kids = work[-1]
            for kid in kids:
                if kid not in index:
                    index[kid] = low[kid] = len(index)
                    stack.append(kid)
                    on_stack.add(kid)
                    work.append((kid, iter(sorted(imports.get(kid, ())))))
                    break
                if kid in on_stack:
                    low[node] = min(low[node], index[kid])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--over", action="store_true", help="list every room over its size")
    args = parser.parse_args(argv)
    package = ROOT / "replay_tui"
    folders = Counter(p.parent.relative_to(ROOT).as_posix() for p in package.rglob("*.py"))
    tests = Counter(
        p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("**/test_*.py")
    )
    modules = Counter(
        p.parent.relative_to(ROOT).as_posix() for p in package.rglob("*.py") if p.stem != "__init__"
    )
    print("files per folder")
    for folder, count in sorted((folders + tests).items()):
        print(f"  {count:4}  {folder}/")
    crowded = [(f, n) for f, n in sorted(modules.items()) if n > FOLDER_LIMIT]
    most = max(modules.items(), key=lambda item: item[1])
    print(f"  most modules: {most[1]} in {most[0]}/   ({len(crowded)} over {FOLDER_LIMIT})")
    if args.over:
        for folder, count in crowded:
            print(f"           {count:5} modules  {folder}/")
    found = rooms(package)
    print("largest")
    for kind in LIMITS:
        kind_rooms = sorted((r for r in found if r[0] == kind), key=lambda r: -r[2])
        over = [r for r in kind_rooms if r[2] > LIMITS[kind]]
        top = kind_rooms[0]
        print(f"  {kind:8} {top[2]:5} lines  {top[1]}   ({len(over)} over {LIMITS[kind]})")
        if args.over:
            for _, name, lines in over:
                print(f"           {lines:5} lines  {name}")
    app = next(r for r in found if r[0] == "class" and r[1].endswith(" ReplayApp"))
    print(f"  the App  {app[2]:5} lines  {app[1]}   (limit {APP_LIMIT})")
    groups = circles("replay_tui")
    print(f"import circles: {len(groups)}")
    for group in groups:
        print("  " + " -> ".join(group))
    readme = len((ROOT / "README.md").read_text().splitlines())
    pages = sorted((ROOT / "docs").glob("*.md"))
    print(f"README.md: {readme} lines; docs/: {len(pages)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
