"""The tests' own house rules: what tests share lives in tests/helpers/ (and
the fixtures in conftest.py), so no test file imports another, and there is
one way to wait for the app."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import TESTS


def _modules() -> dict[Path, ast.Module]:
    """Every Python file under tests/, parsed."""
    return {
        path: ast.parse(path.read_bytes(), filename=str(path))
        for path in sorted(TESTS.rglob("*.py"))
        if "__snapshots__" not in path.parts
    }


def _package(path: Path) -> list[str]:
    """The dotted package of a file under tests/: ``["tests", "helpers"]``."""
    return ["tests", *path.relative_to(TESTS).parent.parts]


def _imported(path: Path, tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of every module ``path`` imports, relative ones made absolute;
    ``from tests import test_app`` counts as ``tests.test_app``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(path)[: len(_package(path)) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _is_test_module(module: str) -> bool:
    """A test file under tests/ (``tests.test_app``: tests/ui/test_app.py)."""
    parts = module.split(".")
    if parts[0] != "tests" or not parts[-1].startswith("test_"):
        return False
    return TESTS.joinpath(*parts[1:]).with_suffix(".py").is_file()


def test_no_test_file_imports_another() -> None:
    """Shared helpers are imported from tests/helpers/ (or conftest.py), never
    from a test file: a test module is only ever pytest's to import."""
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}: imports {module}"
        for path, tree in _modules().items()
        for line, module in _imported(path, tree)
        if _is_test_module(module)
    ]
    assert found == [], "\n".join(found)


def test_there_is_one_until_in_the_helpers() -> None:
    """One ``until`` (in tests/helpers/) waits for the app, for every test."""
    found = [
        (path.relative_to(TESTS.parent).as_posix(), node.lineno)
        for path, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "until"
    ]
    assert len(found) == 1, found
    assert found[0][0].startswith("tests/helpers/"), found


#: What a fixed pause may say on its line: it waits for nothing.
NOT_A_WAIT = ("# not a wait:", "# nothing happens meanwhile")


def _fixed_pauses(tree: ast.Module, source: list[str]) -> list[int]:
    """Lines of ``pilot.pause(<seconds>)``, ``time.sleep(...)`` and
    ``asyncio.sleep(...)`` that do not say why they wait for nothing."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, args = node.func.attr, node.args
        pause = name == "pause" and bool(args)
        sleep = name == "sleep" and isinstance(node.func.value, ast.Name)
        if (pause or sleep) and not any(s in source[node.lineno - 1] for s in NOT_A_WAIT):
            found.append(node.lineno)
    return found


def test_no_test_waits_a_fixed_time() -> None:
    """A test waits for what it needs (``until``), never a length of time: on
    a loaded machine a fixed pause is too short. A pause that waits for
    nothing (a writer's pace, a check that nothing moves) says so on its line;
    ``wait_until`` in tests/helpers/waiting.py is the one sleep between looks."""
    waiting = TESTS / "helpers" / "waiting.py"
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path, tree in _modules().items()
        if path != waiting
        for line in _fixed_pauses(tree, path.read_text().splitlines())
    ]
    assert found == [], "\n".join(found)
