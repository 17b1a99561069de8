"""The Python files a module runs, found by reading its imports, and one
digest of them all.

Rules may do their work in modules beside them: a digest of the rules' one
module would stay the same when a helper changes what they answer. So the
digest covers the module and every module of its *scope* (its own package, or
its own folder) that it imports, directly or through others, found by reading
the source (:mod:`ast`): nothing is executed to digest it. ``import a.b``,
``from a import b``, ``from . import b``, ``from .a import b`` count, at the
top of a module or inside a function alike (imports for type checking too:
reading them costs nothing and changes no answer); importing ``a.b.c`` runs
``a/__init__.py`` and ``a/b/__init__.py`` first, so those count too. Modules
named only at run time (``importlib.import_module(name)``) cannot be seen.

The digest of one file is the sha256 of its bytes (``sha256sum rules.py``);
of several, the sha256 of their manifest in ``sha256sum``'s own format, one
``<sha256>  <path>`` line per file, sorted by path (paths relative to the
scope's base folder, ``/`` between parts), so anyone can recompute it::

    sha256sum replay_tui/reducers/base.py replay_tui/reducers/refund.py | sha256sum
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Scope:
    """Where covered modules are: under ``base`` (a resolved folder), named
    ``prefix`` or ``prefix.*`` (every top-level name when ``prefix`` is
    empty), minus ``skip`` (files) and what is under ``skip_dirs`` (both
    resolved)."""

    base: Path
    prefix: str = ""
    skip: frozenset[Path] = field(default_factory=frozenset)
    skip_dirs: tuple[Path, ...] = ()

    def file_of(self, module: str) -> Path | None:
        """The file that defines ``module`` in this scope, or None."""
        if not module or (self.prefix and not _within(module, self.prefix)):
            return None
        place = self.base.joinpath(*module.split("."))
        for candidate in (place / "__init__.py", place.parent / f"{place.name}.py"):
            if candidate.is_file():
                real = candidate.resolve()
                if real in self.skip or any(real.is_relative_to(d) for d in self.skip_dirs):
                    return None
                return candidate
        return None


@dataclass(frozen=True)
class Covered:
    """The files a module runs (``{relative path: sha256}``) and their digest."""

    files: dict[str, str]
    sha256: str


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _parents(module: str) -> Iterator[str]:
    """``a``, ``a.b``, ``a.b.c`` for ``a.b.c``: importing it runs each."""
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        yield ".".join(parts[:i])


def _imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``tree``, in any block (a function's, an
    ``if``'s, a class's...). Only statements are visited: an import is one,
    and expressions are most of a module's nodes."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                todo.extend(block)


def imported_names(tree: ast.Module, package: str) -> set[str]:
    """Absolute names of the modules ``tree`` imports (those that may be
    modules: ``from a import b`` gives ``a`` and ``a.b``). ``package`` is the
    module's package, for relative imports ("" for a top-level module)."""
    names: set[str] = set()
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.update(_parents(alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, package)
            if base is None:
                continue
            names.update(_parents(base))
            names.update(f"{base}.{a.name}" for a in node.names if a.name != "*")
    return names


def _absolute(module: str | None, level: int, package: str) -> str | None:
    """``from <level dots><module> import ...`` as an absolute name, or None
    when it climbs above the top (Python refuses it too)."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 >= len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, module] if module else parts)


def _name_of(path: Path, base: Path) -> tuple[str, str]:
    """(module name, package) of a file under ``base``."""
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        name = ".".join(parts)
        return name, name
    return ".".join(parts), ".".join(parts[:-1])


@functools.lru_cache(maxsize=256)
def _names_in(source: bytes, package: str) -> frozenset[str]:
    """:func:`imported_names` of a module's source; none if it does not
    parse (it cannot run: it is digested, nothing beyond it is). Kept by
    content, so loading the same rules again (each run of a folder, the
    app's reload) reads only what changed."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(imported_names(tree, package))


def covered(start: Path, scope: Scope, start_bytes: bytes | None = None) -> Covered:
    """The files ``start`` runs in ``scope`` (``start`` itself first of all),
    with their digest. ``start_bytes`` are the bytes of ``start`` to digest
    (those that run; read from disk if not given). Raises :class:`OSError`
    when a file cannot be read."""
    start = start.resolve()
    seen: dict[Path, bytes] = {start: start.read_bytes() if start_bytes is None else start_bytes}
    todo = [start]
    while todo:
        path = todo.pop()
        _, package = _name_of(path, scope.base)
        for name in sorted(_names_in(seen[path], package)):
            found = scope.file_of(name)
            if found is not None and found not in seen:
                seen[found] = found.read_bytes()
                todo.append(found)
    files = {
        path.relative_to(scope.base).as_posix(): hashlib.sha256(data).hexdigest()
        for path, data in seen.items()
    }
    files = dict(sorted(files.items()))
    if len(files) == 1:
        return Covered(files, next(iter(files.values())))
    return Covered(files, hashlib.sha256(manifest(files).encode()).hexdigest())


def manifest(files: dict[str, str]) -> str:
    """``sha256sum``'s lines for ``files`` (``{path: sha256}``), sorted by
    path: a name with a backslash or a newline is escaped as it escapes it."""
    lines = []
    for path, digest in sorted(files.items()):
        if "\\" in path or "\n" in path:
            path = path.replace("\\", "\\\\").replace("\n", "\\n")
            digest = "\\" + digest
        lines.append(f"{digest}  {path}\n")
    return "".join(lines)
