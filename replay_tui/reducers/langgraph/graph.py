"""``--graph module:attr``: the channels' reducers read from the user's own
graph instead of inferred from the thread.

The module is imported as uvicorn imports ``module:app`` (the current
directory first on ``sys.path``), and its attribute is a compiled graph
(``CompiledStateGraph``) or a ``StateGraph``, compiled here without a
checkpointer. Each visible channel of ``graph.channels`` gives its reducer:
a ``BinaryOperatorAggregate``'s ``operator`` (``operator.add``,
``add_messages``, ``operator.or_``, ``max``, ``min`` are the ones these rules
know; any other is the user's function, called on the decoded values as
LangGraph calls it), ``LastValue`` and its kind a last value, a ``Topic`` its
list of writes (kept with ``accumulate``).

Nothing here imports LangGraph: the user's module does, and the graph is
told by its classes' names.
"""

from __future__ import annotations

import importlib
import operator
import os
import sys
import typing
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core.errors import CannotRun
from replay_tui.core.importing import import_attr
from replay_tui.reducers.langgraph.channels import MISSING, is_internal

#: How ``--graph`` is written into the rules' spec, so that every process
#: that opens the run (``check --jobs``, ``diff``'s sides, the app's reloads)
#: loads the same rules.
GRAPH_SPEC = "langgraph --graph "
_LAST = frozenset(
    {"LastValue", "LastValueAfterFinish", "AnyValue", "UntrackedValue", "EphemeralValue"}
)
_GRAPHS = frozenset({"CompiledStateGraph", "Pregel", "CompiledGraph"})


class Unusable(Exception):
    """The graph's reducer cannot be given these values as decoded."""


@dataclass(frozen=True)
class GraphReducer:
    """One channel's reducer as the graph declares it."""

    name: str
    #: The names in :data:`~.channels.REDUCERS` it is (empty: the user's own).
    known: tuple[str, ...] = ()
    #: The user's function ``(left, right) -> value`` (None: a known one).
    operator: Callable[[Any, Any], Any] | None = None
    #: The channel's type, as LangGraph makes its empty value (``typ()``).
    typ: type | None = None
    #: A Topic's: keep the writes of earlier steps.
    accumulate: bool = False
    topic: bool = False

    def fold(self, before: Any, values: list[Any], sets: bool) -> Any:
        """The writes ``values`` folded onto ``before`` as LangGraph does, as
        plain JSON (a set as ``{"__set__": ...}``, :func:`.channels.same`'s
        form); :class:`Unusable` if the user's function refuses them."""
        if self.topic:
            flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
            kept = before if self.accumulate and isinstance(before, list) else []
            return kept + flat
        assert self.operator is not None
        as_sets = sets or self.typ in (set, frozenset)

        def py(value: Any) -> Any:
            return set(value) if as_sets and isinstance(value, list) else value

        try:
            if before is MISSING:
                acc = self.typ() if self.typ in _EMPTY else MISSING
            else:
                acc = py(before)
            for value in values:
                acc = py(value) if acc is MISSING else self.operator(acc, py(value))
        except Exception as exc:  # the user's function, on values it was not written for
            raise Unusable(f"{type(exc).__name__}: {exc}") from None
        return _as_json(acc)


_EMPTY = (list, dict, set, frozenset, int, float, str)


def _as_json(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        try:  # as channels.same compares a set: by each member's canonical JSON
            return {"__set__": sorted(orjson.dumps(v, option=orjson.OPT_SORT_KEYS) for v in value)}
        except TypeError as exc:
            raise Unusable(f"a set the rules cannot compare ({exc})") from None
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise Unusable(f"it returns a {type(value).__name__}, not a value as decoded")


@dataclass(frozen=True)
class GraphChannels:
    """The visible channels of the user's graph and their reducers."""

    target: str
    module: Any
    reducers: dict[str, GraphReducer] = field(default_factory=dict)
    #: Channels of a kind these rules cannot read (their reducer is inferred).
    unknown: tuple[str, ...] = ()


def _base_type(typ: Any) -> type | None:
    """``Annotated[dict[str, int], f]`` is ``dict``."""
    if typing.get_origin(typ) is typing.Annotated:
        typ = typing.get_args(typ)[0]
    origin = typing.get_origin(typ) or typ
    return origin if isinstance(origin, type) else None


def _named(op: Callable[..., Any]) -> str:
    return str(getattr(op, "__qualname__", None) or getattr(op, "__name__", None) or repr(op))


def _is_add_messages(op: Any) -> bool:
    message = sys.modules.get("langgraph.graph.message")
    if message is not None and op is getattr(message, "add_messages", None):
        return True
    return getattr(op, "__module__", "") == "langgraph.graph.message" and _named(op).endswith(
        "add_messages"
    )


def reducer_of(channel: Any) -> GraphReducer | None:
    """The reducer a channel object declares (None: a kind not known here)."""
    kind = type(channel).__name__
    typ = _base_type(getattr(channel, "typ", None))
    if kind in _LAST:
        return GraphReducer("last value", ("last value",), typ=typ)
    if kind == "Topic":
        accumulate = bool(getattr(channel, "accumulate", False))
        return GraphReducer("Topic", typ=typ, accumulate=accumulate, topic=True)
    op = getattr(channel, "operator", None) or getattr(channel, "reducer", None)
    if not callable(op):
        return None
    if _is_add_messages(op):
        return GraphReducer("add_messages", ("add_messages",), typ=typ)
    if op is operator.add or op is operator.iadd:
        return GraphReducer("operator.add", ("operator.add",), typ=typ)
    if op is operator.or_ or op is operator.ior:
        return GraphReducer("operator.or_", ("set union", "dict merge"), typ=typ)
    if op is max or op is min:
        return GraphReducer(op.__name__, (op.__name__,), typ=typ)
    if kind == "DeltaChannel":  # its reducer takes (value, [writes]): folded apart
        return None
    return GraphReducer(_named(op), operator=op, typ=typ)


def load_graph(target: str, *, again: bool = False) -> GraphChannels:
    """Import ``module:attr`` and read its graph's channels; a module that
    does not import, an attribute that is missing, an object that is no
    graph: :class:`CannotRun`, one line. ``again`` (the app's ``R``): the
    module and the modules beside it are read again, as they are now."""
    modname, colon, attr = target.partition(":")
    if not colon or not modname or not attr:
        raise CannotRun(f"--graph {target}: give it as module:attr (e.g. my_agent.graph:graph)")
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)  # as uvicorn finds module:app
    if again:
        _forget_beside(modname)
    try:
        module, obj = import_attr(modname, attr)
    except CannotRun as exc:
        raise CannotRun(f"--graph {target}: {exc}") from None
    names = {t.__name__ for t in type(obj).__mro__}
    if "StateGraph" in names and callable(getattr(obj, "compile", None)):
        try:
            obj = obj.compile()
        except Exception as exc:
            said = " ".join(str(exc).split())
            raise CannotRun(
                f"--graph {target}: the StateGraph does not compile: {type(exc).__name__}: {said}"
            ) from None
        names = {t.__name__ for t in type(obj).__mro__}
    channels = getattr(obj, "channels", None)
    if not (names & _GRAPHS) or not isinstance(channels, dict):
        what = f"an object of type {type(obj).__name__}"
        if callable(obj):
            what = "a function (call it in the module: graph = make_graph())"
        raise CannotRun(
            f"--graph {target}: {what}, not a LangGraph graph (a StateGraph or its compiled graph)"
        )
    reducers: dict[str, GraphReducer] = {}
    unknown = []
    for name, channel in channels.items():
        if not isinstance(name, str) or is_internal(name):
            continue
        found = reducer_of(channel)
        if found is None:
            unknown.append(name)
        else:
            reducers[name] = found
    return GraphChannels(target, module, reducers, tuple(sorted(unknown)))


def _forget_beside(modname: str) -> None:
    """Drop ``modname`` and the modules of its folder from Python's cache,
    so the next import runs them as they are now (an edited graph)."""
    where = getattr(sys.modules.get(modname), "__file__", None)
    if not where:
        return
    folder = Path(where).resolve().parent
    for name, module in list(sys.modules.items()):
        found = getattr(module, "__file__", None)
        if found and Path(found).resolve().parent == folder:
            del sys.modules[name]
    importlib.invalidate_caches()


def prove_by_graph(
    state: MutableMapping[str, Any],
    channel: str,
    reducer: GraphReducer,
    before: Any,
    values: list[Any],
    writes: list[dict[str, Any]],
    after: Any,
    warn: Callable[[str], None],
) -> None:
    """The superstep's writes to ``channel`` folded by the graph's own
    reducer must give ``after``: else a divergence. The user's function that
    cannot take the values as decoded is said once; from there the channel
    is only checked for changes with no write (``inference`` says so)."""
    from replay_tui.core.errors import RuleViolation
    from replay_tui.reducers.langgraph.channels import REDUCERS, explains, first_difference

    said = f"{reducer.name} (from the graph)"
    if reducer.known:
        fits = [n for n in reducer.known if explains(n, before, values, after)]
        if after is not MISSING and fits:
            state["reducers"][channel] = said
            steps = 1 + int((state["inference"].get(channel) or {}).get("steps", 0))
            state["inference"][channel] = {
                "candidates": fits,
                "steps": steps,
                "sets": False,
                "name": fits[0],
            }
            return
        try:
            expected = REDUCERS[reducer.known[0]](before, values)
        except Exception:
            expected = MISSING
    else:
        try:
            expected = reducer.fold(before, values, any(w.get("set") for w in writes))
        except Unusable as exc:
            state["inference"][channel] = {"candidates": [], "steps": 1, "sets": False}
            state["reducers"][channel] = f"{said}: its values as decoded cannot be given to it"
            warn(
                f"channel {channel!r}: the graph's reducer {reducer.name} cannot take its "
                f"values as decoded from JSON ({exc}): from here only a change with no "
                "write is checked"
            )
            return
        if after is not MISSING and first_difference(expected, after) is None:
            state["reducers"][channel] = said
            return
    where = first_difference(expected, after) if expected is not MISSING else None
    tasks = ", ".join(sorted({str(w.get("task")) for w in writes}))
    raise RuleViolation(
        "divergence",
        f"channel {channel!r}: the writes of {tasks} do not explain its value by {said}"
        + (
            f"; first difference at {channel}{where}" if where and not where.startswith("(") else ""
        ),
    )


def compare_channels(
    graph: GraphChannels, seen: set[str], said: list[str], done: bool, warn: Callable[[str], None]
) -> list[str]:
    """Warn (once each) of channels the thread has and the graph lacks, and,
    once the thread is done, of the graph's channels the thread never held;
    ``said``: what was warned of already (returned with what is now)."""
    said = list(said)
    known = set(graph.reducers) | set(graph.unknown)
    strangers = sorted(seen - known - set(said))
    if strangers:
        said.extend(strangers)
        plural = "s" if len(strangers) > 1 else ""
        warn(
            f"the thread has channel{plural} {', '.join(strangers)} that the graph "
            f"{graph.target} lacks: {'their reducers are' if plural else 'its reducer is'} inferred"
        )
    absent = sorted(known - seen)
    if done and "(absent)" not in said:
        said.append("(absent)")
        if absent:
            plural = "s" if len(absent) > 1 else ""
            warn(
                f"the graph {graph.target} has channel{plural} {', '.join(absent)} "
                "that this thread never held"
            )
    return said
