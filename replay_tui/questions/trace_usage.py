"""Token usage of an OpenTelemetry GenAI trace, counted as the ``otel_genai``
rules count it: per turn and per model.

The trace is replayed strictly with the built-in rules; each turn's input
and output tokens are the rules' (``turns[i].tokens``: each logical model
call once, a wrapper span and the provider span inside it being one call,
a span exported twice counted once). The rules' derivation of each trace
(:func:`~replay_tui.reducers.otel_genai.turns.derive_trace`, a pure function of
the trace's store) says which model made each call. Cache tokens are read
from the same calls' spans (``gen_ai.usage.cache_read.input_tokens``,
``gen_ai.usage.cache_creation.input_tokens``, on the span or on its
inference-details event or log): the GenAI conventions count them inside
the input tokens. Tokens only, never dollars.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay_tui.core.errors import CannotRun
from replay_tui.engine.replay import verify
from replay_tui.formats.envelope import Event
from replay_tui.formats.run import OTEL, locate_run
from replay_tui.reducers import rules_for_run
from replay_tui.reducers.otel_genai.messages import DETAILS
from replay_tui.reducers.otel_genai.tools import Call
from replay_tui.reducers.otel_genai.turns import derive_trace

#: The token columns of a trace, in order.
FIELDS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
#: Where each cache count is, as the GenAI semantic conventions name it.
CACHE_ATTRIBUTES = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
)
#: The model of a call whose spans name none.
UNKNOWN = "unknown"


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def _plus(into: list[int], other: list[int]) -> None:
    for i, n in enumerate(other):
        into[i] += n


@dataclass(slots=True)
class TurnUsage:
    """One turn: its tokens per model (in :data:`FIELDS` order)."""

    number: int
    trace: str
    user_text: str | None
    status: str
    models: dict[str, list[int]] = field(default_factory=dict)
    calls: int = 0

    def total(self) -> list[int]:
        tokens = [0] * len(FIELDS)
        for vector in self.models.values():
            _plus(tokens, vector)
        return tokens


@dataclass(slots=True)
class TraceUsage:
    """A trace file's usage: its turns, and how far strict replay went."""

    path: Path
    rules: str
    events: int
    #: ``code at line N`` if strict replay stopped (counts are of the valid prefix).
    stopped: str | None
    turns: list[TurnUsage] = field(default_factory=list)

    def by_model(self) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for turn in self.turns:
            for model, vector in turn.models.items():
                _plus(found.setdefault(model, [0] * len(FIELDS)), vector)
        return dict(sorted(found.items()))

    def total(self) -> list[int]:
        tokens = [0] * len(FIELDS)
        for turn in self.turns:
            _plus(tokens, turn.total())
        return tokens

    @property
    def calls(self) -> int:
        return sum(turn.calls for turn in self.turns)


def is_trace(path: Path) -> bool:
    """``path`` is read as an OpenTelemetry trace (as the app and check read it)."""
    try:
        return path.is_file() and locate_run(path).format == OTEL
    except CannotRun:
        return False


def _cache_of(events: list[Event]) -> dict[tuple[str, str], list[int]]:
    """Per (trace, span): the cache tokens its attributes (or its details
    event's or log's) say, where any do."""
    found: dict[tuple[str, str], list[int]] = {}
    for event in events:
        p = event.payload
        attrs = p.get("attributes")
        if not isinstance(attrs, Mapping):
            continue
        details = p.get("name", p.get("event_name")) == DETAILS
        if event.kind in ("span_event", "log") and not details:
            continue  # only an inference's details event or log says its usage
        if not any(name in attrs for name in CACHE_ATTRIBUTES):
            continue
        key = (str(p.get("trace_id", "")), str(p.get("span_id", "")))
        found.setdefault(key, [_count(attrs.get(name)) for name in CACHE_ATTRIBUTES])
    return found


def trace_usage(path: Path) -> TraceUsage:
    """The usage of the trace file ``path``, by turn and model (raises
    :class:`CannotRun` if it is not a trace)."""
    paths = locate_run(path)
    if paths.format != OTEL:
        raise CannotRun(f"{path}: not an OpenTelemetry trace")
    rules = rules_for_run(None, paths.events, paths.format)
    replay = verify(paths, rules, history=True)
    try:
        state = replay.final_state()
        events = [replay.ledger.event(i) for i in range(replay.valid)]
    finally:
        replay.close()
    error = replay.error
    stopped = None if error is None else f"{error.code} at line {error.line}"
    named = f"{rules.reducer.name} {rules.reducer.version}"
    usage = TraceUsage(path, named, replay.valid, stopped)
    cache = _cache_of([e for e in events if isinstance(e, Event)])
    store = state.get("store", {})
    calls_of: dict[tuple[str, str], list[Call]] = {}
    for tid in sorted(store):
        if tid:
            for derived in derive_trace(tid, store[tid], []).turns:
                calls_of[(derived.trace, derived.anchor)] = derived.calls
    for number, public in enumerate(state.get("turns", []), 1):
        tid, anchor = str(public.get("trace")), public.get("anchor") or {}
        calls = calls_of.get((tid, str(anchor.get("span"))), [])
        usage.turns.append(_turn_usage(number, public, calls, cache))
    return usage


def _turn_usage(
    number: int,
    public: Mapping[str, Any],
    calls: list[Call],
    cache: Mapping[tuple[str, str], list[int]],
) -> TurnUsage:
    """A turn of the rules' state, its calls' tokens put to their models."""
    tid = str(public.get("trace"))
    turn = TurnUsage(number, tid, public.get("user_text"), str(public.get("status")))
    turn.calls = _count(public.get("llm_calls", len(calls)))
    for call in calls:
        if not call.usage:
            continue
        read = next((cache[(tid, s)] for s in call.chain if (tid, s) in cache), [0, 0])
        vector = [_count(call.usage[0]), _count(call.usage[1]), *read]
        _plus(turn.models.setdefault(call.model or UNKNOWN, [0] * len(FIELDS)), vector)
    # the rules' own count of the turn is the one that stands: what no
    # call's span names a model for is the unknown model's
    said = public.get("tokens") or {}
    counted = turn.total()
    rest = [
        max(0, _count(said.get("input")) - counted[0]),
        max(0, _count(said.get("output")) - counted[1]),
    ]
    if any(rest):
        _plus(turn.models.setdefault(UNKNOWN, [0] * len(FIELDS)), [*rest, 0, 0])
    return turn
