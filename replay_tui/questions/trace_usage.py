"""Token usage of an OpenTelemetry GenAI trace, counted as the ``otel_genai``
rules count it: per turn and per model.

The trace is replayed strictly with the built-in rules; each turn's input
and output tokens are the rules' (``turns[i].tokens``: each logical model
call once, a wrapper span and the provider span inside it being one call,
a span exported twice counted once). The rules' derivation of each trace
(``OtelGenAIRules.turn_calls``) says which model made each call. Cache tokens are read
from the same calls, as the rules read them (``gen_ai.usage.cache_read.input_tokens``,
``gen_ai.usage.cache_creation.input_tokens`` and OpenLLMetry's and
OpenInference's names): the input holds them, as the conventions count it.
Tokens only, never dollars. Which calls make each turn is in the rules'
memo (their state holds what a user reads), read from the replay that made
the state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay_tui.core.errors import CannotRun
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import OTEL, locate_run
from replay_tui.reducers import rules_for_run
from replay_tui.reducers.base import State
from replay_tui.reducers.otel_genai import OtelGenAIRules
from replay_tui.reducers.otel_genai.tools import Call

#: The token columns of a trace, in order.
FIELDS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
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


def trace_usage(path: Path) -> TraceUsage:
    """The usage of the trace file ``path``, by turn and model (raises
    :class:`CannotRun` if it is not a trace)."""
    paths = locate_run(path)
    if paths.format != OTEL:
        raise CannotRun(f"{path}: not an OpenTelemetry trace")
    rules = rules_for_run(None, paths.events, paths.format)
    reducer = rules.reducer
    assert isinstance(reducer, OtelGenAIRules)
    replay = Replay(paths, rules)
    # the state as the rules hold it, with the memo they keep beside it
    last: list[State] = [reducer.initial_state()]

    def watch(seq: int, state: State, kind: str) -> None:
        last[0] = state

    replay.observer = watch
    try:
        replay.verify()
        state = last[0]
        turn_calls = reducer.turn_calls(state, replay.ctx)
    finally:
        replay.close()
    error = replay.error
    stopped = None if error is None else f"{error.code} at line {error.line}"
    named = f"{reducer.name} {reducer.version}"
    usage = TraceUsage(path, named, replay.valid, stopped)
    for number, public in enumerate(state.get("turns", []), 1):
        calls = turn_calls[number - 1] if number <= len(turn_calls) else []
        usage.turns.append(_turn_usage(number, public, calls))
    return usage


def _turn_usage(
    number: int,
    public: Mapping[str, Any],
    calls: list[Call],
) -> TurnUsage:
    """A turn of the rules' state, its calls' tokens put to their models."""
    tid = str(public.get("trace"))
    turn = TurnUsage(number, tid, public.get("user_text"), str(public.get("status")))
    turn.calls = _count(public.get("llm_calls", len(calls)))
    for call in calls:
        if not call.usage:
            continue
        vector = [_count(n) for n in call.usage]
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
