"""A trace file as the rules receive it, through the source itself
(:mod:`replay_tui.formats.otel.source`), with a way to change the normal form on
the way (a span's end moved before its start, logs cut from their span)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replay_tui.formats.envelope import Event, parse_line
from replay_tui.formats.otel.load import Loader
from replay_tui.formats.otel.source import Trace, load_spans, records_of

Record = tuple[str, dict[str, Any], str | None]


def load_file(path: Path) -> Loader:
    """The file's spans and logs in the normal form."""
    return load_spans(path)[0]


def records(loader: Loader) -> list[Record]:
    """(kind, payload, ts) of each record, in the source's order."""
    lines = b"".join(Trace(records_of(loader), "", "trace", "otlp").envelope_lines())
    found = [orjson.loads(line) for line in lines.splitlines()]
    return [(r["kind"], r["payload"], r.get("ts")) for r in found]


def to_events(recs: list[Record], run_id: str = "trace") -> list[Event]:
    """Envelope v1 events, seq 1.. in the order given, parsed as a ledger line is."""
    out: list[Event] = []
    offset = 0
    for n, (kind, payload, ts) in enumerate(recs, 1):
        line: dict[str, Any] = {"seq": n, "run_id": run_id, "kind": kind, "payload": payload}
        if ts is not None:
            line["ts"] = ts
        raw = orjson.dumps(line)
        event = parse_line(raw, n, offset)
        assert isinstance(event, Event), event
        out.append(event)
        offset += len(raw) + 1
    return out


def file_events(path: Path) -> list[Event]:
    """The events ``replay-tui`` makes of ``path``."""
    return to_events(records(load_file(path)), path.stem)


_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
#: Every trace fixture: the producers' (documents and Collector lines) and
#: the shared recordings.
TRACE_FIXTURES = sorted(
    p
    for p in [
        *(_FIXTURES / "otel-producers").glob("*.json"),
        *(_FIXTURES / "otel-producers").glob("*.jsonl"),
        *(_FIXTURES / "otel-traces").rglob("*.json"),
    ]
    if not p.name.endswith(".truth.json")
)


def replayed_events(path: Path) -> list[Event]:
    """The valid events of ``path`` as ``replay-tui check`` reads them (any
    trace shape, the Collector's lines included)."""
    from replay_tui.engine.open import open_replay

    replay, _ = open_replay(str(path), fmt="otel")
    try:
        replay.verify()
        found = [replay.event(i) for i in range(replay.valid)]
    finally:
        replay.close()
    events = [e for e in found if isinstance(e, Event)]
    assert len(events) == len(found)
    return events
