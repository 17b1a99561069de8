"""Finding a reducer by name: built-in, entry point, module or file.

``--reducer`` accepts:

- a name: ``agent_run`` (default), ``refund``, ``temporal``, ``claude_code``,
  ``codex``, ``otel_genai``, or any reducer an installed
  package offers through the entry-point group ``replay_tui.reducers``;
- ``package.module:NAME`` (an importable module);
- ``path/to/rules.py:NAME`` (a file, loaded as a fresh module each time, so
  an edited file is read again).

Without ``--reducer``, :func:`rules_for_run` picks the rules by the first
event's kind: ``agent_run`` if it knows that kind, else the one known reducer
that does (``refund`` for a run that starts with ``requested``); a Temporal history
gets ``temporal``, a Claude Code session ``claude_code``, a Codex rollout ``codex``
an OpenTelemetry GenAI trace ``otel_genai`` and an Inspect AI sample ``inspect_ai``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

from replay_tui.core.errors import CannotRun
from replay_tui.core.importing import import_attr
from replay_tui.core.sources import Covered, Scope, covered, manifest
from replay_tui.reducers.base import Reducer

ENTRY_POINT_GROUP = "replay_tui.reducers"
#: The package of the built-in rules: what their digest covers.
_RULES_PACKAGE = "replay_tui.reducers"
DEFAULT = "agent_run"
_BUILTIN = {
    "agent_run": "replay_tui.reducers.agent_run:REDUCER",
    "refund": "replay_tui.reducers.refund:REDUCER",
    "temporal": "replay_tui.reducers.temporal:REDUCER",
    "claude_code": "replay_tui.reducers.claude_code:REDUCER",
    "codex": "replay_tui.reducers.codex:REDUCER",
    "gemini": "replay_tui.reducers.gemini:REDUCER",
    "otel_genai": "replay_tui.reducers.otel_genai:REDUCER",
    "langgraph": "replay_tui.reducers.langgraph:REDUCER",
    "inspect_ai": "replay_tui.reducers.inspect_ai:REDUCER",
}
#: The rules a source that is not a ledger opens with.
_FOR_FORMAT = {
    "temporal": "temporal",
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini": "gemini",
    "otel": "otel_genai",
    "langgraph": "langgraph",
    "inspect": "inspect_ai",
}


class LoadedReducer:
    """A reducer plus where it came from and the digest of its rules source:
    ``rules_files`` are the files the rules run (``{path: sha256}``, paths
    relative to the folder above their package, or to a rules file's own
    folder), ``rules_sha256`` their digest (see :mod:`replay_tui.core.sources`)."""

    def __init__(self, reducer: Reducer, spec: str, source: Covered) -> None:
        self.reducer = reducer
        self.spec = spec
        self.rules_sha256 = source.sha256
        self.rules_files = source.files
        #: Built-in rules are ours and tested; any other rules are watched
        #: (see :mod:`replay_tui.reducers.calling.guard`).
        self.trusted = False


def _check(obj: Any, spec: str) -> Reducer:
    if inspect.isclass(obj):
        obj = obj()
    missing = [
        a
        for a in ("name", "version", "kinds", "initial_state", "apply", "summary")
        if not hasattr(obj, a)
    ]
    if missing:
        raise CannotRun(f"reducer {spec} lacks {', '.join(missing)}")
    if not isinstance(obj.kinds, (frozenset, set)):
        raise CannotRun(f"reducer {spec}: kinds must be a set of strings")
    return obj  # type: ignore[no-any-return]


def _scope_of(module: ModuleType, path: Path) -> Scope | None:
    """Where the modules ``module`` runs that its digest covers: for the
    built-in rules, the rules package (``replay_tui.reducers`` without what
    loads and calls the rules); else the module's top-level package. None
    when ``path`` is not where the module's name says (an unusual loader)."""
    parts = module.__name__.split(".")
    up = len(parts) if path.name == "__init__.py" else len(parts) - 1
    if up >= len(path.parents):
        return None
    base = path.parents[up]
    if Scope(base).file_of(module.__name__) != path:
        return None
    if module.__name__.startswith(_RULES_PACKAGE + "."):
        here = Path(__file__).resolve().parent
        return Scope(base, _RULES_PACKAGE, frozenset({here / "__init__.py"}), (here / "calling",))
    return Scope(base, parts[0])


def _source_of(module: ModuleType) -> Covered:
    """The files the module runs in its own package, and their digest: what
    ``rules_sha256`` is (the source's bytes if no file can be found)."""
    try:
        name = inspect.getsourcefile(module)
        if name:
            path = Path(name).resolve()
            scope = _scope_of(module, path)
            if scope is None:
                scope = Scope(path.parent, path.stem)
            return covered(path, scope)
    except (OSError, TypeError):
        pass
    try:
        source = inspect.getsource(module).encode()
    except (OSError, TypeError):
        source = repr(module).encode()
    return Covered({}, hashlib.sha256(source).hexdigest())


def _forget_helpers(digest: Covered, folder: Path) -> None:
    """Drop the modules beside a rules file that it imports (and that its
    digest covers) from Python's cache, so the rules run the helpers as
    they are now, as digested, not as first imported (the app loads edited
    rules again)."""
    for rel in digest.files:
        name = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        cached = sys.modules.get(name)
        where = getattr(cached, "__file__", None)
        if where and Path(where).resolve() == (folder / rel).resolve():
            del sys.modules[name]


def _from_file(path: Path, attr: str, spec: str) -> LoadedReducer:
    if not path.is_file():
        raise CannotRun(f"reducer file {path} does not exist")
    source = path.read_bytes()
    folder = path.resolve().parent
    try:
        digest = covered(path, Scope(folder), source)
    except OSError as exc:
        raise CannotRun(f"reducer file {path}: cannot read what it imports ({exc})") from None
    _forget_helpers(digest, folder)
    tag = hashlib.sha256(str(path.resolve()).encode() + source).hexdigest()[:16]
    name = f"replay_tui_user_rules_{tag}"
    mod_spec = importlib.util.spec_from_file_location(name, path)
    if mod_spec is None or mod_spec.loader is None:
        raise CannotRun(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        # Run the very bytes digested above, and write no __pycache__ beside
        # them (the rules file may sit in a run folder: evidence, never written).
        exec(compile(source, str(path), "exec", dont_inherit=True), module.__dict__)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit at import is a broken rules file too
        sys.modules.pop(name, None)
        raise CannotRun(
            f"reducer file {path} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    if not hasattr(module, attr):
        raise CannotRun(f"{path} has no {attr}")
    return LoadedReducer(_check(getattr(module, attr), spec), spec, digest)


def _from_module(modname: str, attr: str, spec: str) -> LoadedReducer:
    try:
        module, obj = import_attr(modname, attr)
    except CannotRun as exc:
        raise CannotRun(f"--reducer {spec}: {exc}") from None
    return LoadedReducer(_check(obj, spec), spec, _source_of(module))


def available() -> dict[str, str]:
    """Reducer names that ``--reducer NAME`` accepts, with their targets."""
    from importlib.metadata import entry_points  # 20-30 ms: only when asked

    found = dict(_BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def _with_graph(spec: str, *, again: bool) -> LoadedReducer:
    """The ``langgraph`` rules with the reducers of the user's graph
    (``--graph module:attr``): their digest covers the graph's module too.
    ``again``: the graph's module is read again (the app's ``R``)."""
    from replay_tui.reducers.langgraph.graph import GRAPH_SPEC, load_graph
    from replay_tui.reducers.langgraph.rules import LangGraphRules

    rules = load_reducer("langgraph")
    graph = load_graph(spec.removeprefix(GRAPH_SPEC), again=again)
    files = {**_source_of(graph.module).files, **rules.rules_files}
    digest = hashlib.sha256(manifest(files).encode()).hexdigest()
    return LoadedReducer(LangGraphRules(graph), spec, Covered(files, digest))


def load_reducer(spec: str | None = None, *, again: bool = False) -> LoadedReducer:
    """Resolve ``--reducer`` (see module docstring); raises :class:`CannotRun`.
    ``again``: rules loaded once already are read again, as they are now
    (a rules file always is; ``--graph``'s module only when asked)."""
    spec = spec or DEFAULT
    if spec.startswith("langgraph --graph "):
        return _with_graph(spec, again=again)
    if ":" in spec:
        target, _, attr = spec.rpartition(":")
        if target.endswith(".py") or "/" in target or "\\" in target:
            return _from_file(Path(target), attr, spec)
        return _from_module(target, attr, spec)
    # a plugin never takes a built-in name (see available): no need to look
    names = _BUILTIN if spec in _BUILTIN else available()
    if spec not in names:
        raise CannotRun(f"no reducer named {spec!r} (known: {', '.join(sorted(names))})")
    target, _, attr = names[spec].partition(":")
    loaded = _from_module(target, attr, spec)
    loaded.trusted = _BUILTIN.get(spec) == names[spec]
    return loaded


def _first_kind(events: Path) -> str | None:
    """The ``kind`` of the first line, if it is readable JSON (else None)."""
    try:
        with events.open("rb") as fh:
            first = fh.readline(64 << 20)
    except OSError:
        return None
    try:
        obj = orjson.loads(first.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return None
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return kind if isinstance(kind, str) else None


def rules_for_run(spec: str | None, events: Path, fmt: str = "jsonl") -> LoadedReducer:
    """``--reducer`` if given, else the reducer that knows the first event's kind
    (the source's own rules for a Temporal history or an agent's session).

    A run whose first kind no reducer knows gets the default, which then
    reports ``unknown_kind`` as strict replay must. Rules written for another
    source (``source_format``) are never chosen for a ledger by its kind.
    """
    if spec and spec.startswith("langgraph --graph ") and fmt != "langgraph":
        graph = spec.removeprefix("langgraph --graph ")
        raise CannotRun(f"--graph {graph}: {events} is not a LangGraph thread (it is {fmt})")
    if spec:
        return load_reducer(spec)
    if fmt in _FOR_FORMAT:
        return load_reducer(_FOR_FORMAT[fmt])
    default = load_reducer(DEFAULT)
    kind = _first_kind(events)
    if kind is None or kind in default.reducer.kinds:
        return default
    for name in sorted(available()):
        if name == DEFAULT:
            continue
        try:
            candidate = load_reducer(name)
        except CannotRun:
            continue  # a broken plugin must not stop other runs from opening
        if getattr(candidate.reducer, "source_format", None) is not None:
            continue
        if kind in candidate.reducer.kinds:
            return candidate
    return default
