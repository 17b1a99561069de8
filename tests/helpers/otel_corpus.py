"""The OpenTelemetry corpus as the rules' tests read it: its files, their
events (cached), and the orders tests put them in."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import orjson

from replay_tui.formats.budget import Budget
from replay_tui.formats.envelope import Event
from replay_tui.formats.receipts import ReceiptStore
from replay_tui.reducers.base import Context
from replay_tui.reducers.otel_genai import REDUCER
from tests.conftest import ROOT
from tests.helpers.otel_records import file_events, load_file, records, to_events

CORPUS = ROOT / "tests" / "fixtures" / "otel-traces"
TRUTHS = sorted(CORPUS.rglob("*.truth.json"))
TRACES = [t.with_name(t.name.replace(".truth.json", ".json")) for t in TRUTHS]
#: Files with several traces: the orders where traces interleave differ.
MULTI_TRACE = [p for p in TRACES if p.stem == "S3"] + [
    CORPUS / "hand" / "three_trace_conversation.json",
    CORPUS / "hand" / "two_span_cycle.json",
]
_EVENTS: dict[Path, list[Event]] = {}


def name_of(path: Path) -> str:
    return str(path.relative_to(CORPUS).with_suffix(""))


def events_of(path: Path) -> list[Event]:
    if path not in _EVENTS:
        _EVENTS[path] = file_events(path)
    return _EVENTS[path]


def new_ctx() -> Context:
    return Context(Budget(), ReceiptStore(ROOT, enabled=False))


def renumbered(events: list[Event]) -> list[Event]:
    recs = [(e.kind, e.payload, e.ts) for e in events]
    return to_events(recs)


def interleaved(events: list[Event], rnd: random.Random) -> list[Event]:
    """The records of each trace in their order, the traces interleaved at random."""
    by_trace: dict[str, list[Event]] = {}
    for e in events:
        by_trace.setdefault(e.payload["trace_id"], []).append(e)
    queues = [list(reversed(q)) for q in by_trace.values()]
    out: list[Event] = []
    while queues:
        q = rnd.choice(queues)
        out.append(q.pop())
        if not q:
            queues.remove(q)
    return out


def one_long_trace(path: Path, times: int) -> list[Event]:
    """``path``'s spans ``times`` over as ONE trace (span ids made unique,
    each repetition a minute later): a long agent run's single trace."""
    recs: list[Any] = []
    for rep in range(times):
        for kind, payload, ts in records(load_file(path)):
            p = copy.deepcopy(payload)
            p["trace_id"] = "ab" * 16
            for key in ("span_id", "parent_id"):
                if p.get(key):
                    p[key] = f"{rep:04x}{p[key][4:]}"
            for key in ("start_ns", "end_ns", "time_ns"):
                if p.get(key):
                    p[key] += rep * 60_000_000_000
            recs.append((kind, p, ts))
    return to_events(recs)


def every_prefix(events: list[Event]) -> list[tuple[bytes, list[str]]]:
    """The state after every prefix (sorted JSON), and the warnings at each record."""
    ctx = new_ctx()
    state = REDUCER.initial_state()
    out = []
    for event in events:
        ctx.warnings = []
        state = REDUCER.apply(state, event, ctx)
        out.append((orjson.dumps(state, option=orjson.OPT_SORT_KEYS), list(ctx.warnings)))
    return out
