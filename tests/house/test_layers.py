"""The architecture holds: layers never import upwards, and the paths
scripts and rules use still resolve."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points

from tests.conftest import ROOT


def test_import_linter_contracts_are_kept() -> None:
    """The layers, "the core imports no textual" and "no Textual in ui/'s
    rendering and controllers" (pyproject.toml): every contract kept."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert len(contracts["contracts"]) == 3
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 kept, 0 broken" in out.stdout


def _circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The import circles among modules: each set of modules that reach one
    another (Tarjan's strongly connected components, iterative)."""
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
                if kid not in imports:
                    continue
                if kid not in index:
                    index[kid] = low[kid] = len(index)
                    stack.append(kid)
                    on_stack.add(kid)
                    work.append((kid, iter(sorted(imports[kid]))))
                    break
                if kid in on_stack:
                    low[node] = min(low[node], index[kid])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
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


def test_no_module_imports_itself_through_others() -> None:
    """No import circle anywhere, inside a layer too (the contracts see only
    imports between layers); imports only for type checking count, since a
    circle of types is a circle of knowledge all the same."""
    import grimp

    graph = grimp.build_graph("replay_tui")
    imports = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _circles(imports) == []
    # and the test finds one where there is one
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_paths_scripts_and_rules_use_still_resolve() -> None:
    """README's script paths and the names rules import, from before the
    subpackages: kept as re-exports."""
    for module, name in [
        ("replay_tui.replay", "Replay"),
        ("replay_tui.replay", "verify"),
        ("replay_tui.run", "locate_run"),
        ("replay_tui.reducers", "load_reducer"),
        ("replay_tui.reducers.base", "Context"),
        ("replay_tui.errors", "RuleViolation"),
        ("replay_tui.envelope", "Event"),
        ("replay_tui.cli", "main"),
    ]:
        assert callable(getattr(importlib.import_module(module), name)), (module, name)
    from replay_tui.engine.replay import Replay
    from replay_tui.replay import Replay as Old

    assert Old is Replay


def test_entry_points_resolve() -> None:
    scripts = {e.name: e for e in entry_points(group="console_scripts")}
    assert callable(scripts["replay-tui"].load())
    rules = {e.name: e.load() for e in entry_points(group="replay_tui.reducers")}
    assert {"agent_run", "refund"} <= set(rules)


def test_few_modules_loose_at_the_top() -> None:
    loose = sorted(p.name for p in (ROOT / "replay_tui").glob("*.py"))
    assert len(loose) <= 6, loose


def test_no_module_imports_another_modules_private_names() -> None:
    """What two modules share is named as shared: a module split along its
    seams says so, not by reaching for another's ``_private`` names."""
    import ast

    found = []
    for path in sorted((ROOT / "replay_tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("replay_tui"):
                private = [
                    a.name for a in node.names if a.name.startswith("_") and a.name[1] != "_"
                ]
                found += [f"{path.relative_to(ROOT)}: {node.module}.{n}" for n in private]
    assert found == []
