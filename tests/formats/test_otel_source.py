"""OpenTelemetry traces as a source: every shape they are exported in is
found by its content, read into one normal form and put in one stable
order of records (span starts, events, logs, ends), whatever the shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.core.errors import CannotRun
from replay_tui.engine.replay_core import open_ledger
from replay_tui.formats.otel.source import load_trace, looks_like_trace
from replay_tui.formats.run import OTEL, locate_run
from tests.conftest import ROOT, TESTS
from tests.helpers.otel_truth import compare

TRACES = TESTS / "fixtures" / "otel-traces"
FILES = sorted(p for p in TRACES.rglob("*.json") if not p.name.endswith(".truth.json"))


def _events(path: Path) -> list[dict[str, Any]]:
    """The events of ``path`` as the ledger a user opens gives them."""
    ledger = open_ledger(locate_run(path))
    try:
        return [orjson.loads(raw) for _, raw in ledger.scan()]
    finally:
        ledger.close()


def _order(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """What a record is, without where it was in the file."""
    return [
        (e["kind"], e["payload"]["trace_id"], str(e["payload"].get("span_id")))
        + ((str(e["payload"].get("index")),) if e["kind"] == "span_event" else ())
        for e in events
    ]  # type: ignore[misc]


def test_the_fixtures_are_the_shared_recordings_byte_for_byte() -> None:
    shared = ROOT.parent / "shared" / "otel-traces"
    if not shared.is_dir():
        pytest.skip("../shared/ is not beside this clone")
    for path in shared.rglob("*"):
        if path.is_file():
            assert (TRACES / path.relative_to(shared)).read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TRACES)))
def test_every_recording_is_found_by_content_and_ordered(path: Path) -> None:
    assert looks_like_trace(path) and locate_run(path).format == OTEL
    events = _events(path)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    times = [e["payload"]["start_ns" if e["kind"] == "span_start" else "end_ns"]
             for e in events if e["kind"] in ("span_start", "span_end")]  # fmt: skip
    assert times == sorted(times)
    started: dict[tuple[str, str, int], int] = {}
    for e in events:
        p = e["payload"]
        own = (p["trace_id"], p.get("span_id"), p["copy"])
        if e["kind"] == "span_start":
            started[own] = e["seq"]
            assert p["end_ns"] >= p["start_ns"]
        elif e["kind"] in ("span_end", "span_event"):
            assert started[own] < e["seq"]  # a span's end and events after its start
            assert e["parent_seq"] == started[own]
        if "parent_seq" in e:
            assert e["parent_seq"] < e["seq"]


def _as_lines(doc: dict[str, Any]) -> bytes:
    """The Collector file exporter's form: one export request a line (here,
    one per resource: logs first, as an exporter may send them)."""
    requests = [{"resourceLogs": [rl]} for rl in doc.get("resourceLogs", [])]
    requests += [{"resourceSpans": [rs]} for rs in doc.get("resourceSpans", [])]
    return b"".join(orjson.dumps(r) + b"\n" for r in requests)


def _as_tempo(doc: dict[str, Any]) -> bytes:
    batches = []
    for rs in doc.get("resourceSpans", []):
        batch = dict(rs)
        batch["instrumentationLibrarySpans"] = [
            {"instrumentationLibrary": ss.get("scope", {}), "spans": ss["spans"]}
            for ss in batch.pop("scopeSpans")
        ]
        batches.append(batch)
    return orjson.dumps({"batches": batches})


@pytest.mark.parametrize("name", ["adk_py/v1_default/S2.json", "hand/mcp_tool_call.json"])
def test_json_lines_and_tempo_give_the_same_records_as_the_document(
    name: str, tmp_path: Path
) -> None:
    source = TRACES / name
    doc = orjson.loads(source.read_bytes())
    want = _order(_events(source))
    for shape, data in (("lines", _as_lines(doc)), ("tempo", _as_tempo(doc))):
        copy = tmp_path / f"{shape}.json"
        copy.write_bytes(data)
        assert locate_run(copy).format == OTEL
        got = _events(copy)
        if shape == "tempo":  # Tempo exports spans only
            assert _order(got) == [r for r in want if r[0] != "log"]
        else:  # in the order of export, each request's records in time order
            assert sorted(_order(got)) == sorted(want)

        def starts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
            found = [e["payload"] for e in events if e["kind"] == "span_start"]
            return sorted(found, key=lambda p: (p["trace_id"], p["span_id"], p["start_ns"]))

        for a, b in zip(starts(got), starts(_events(source)), strict=True):
            assert (a["attributes"], a["name"], a["status"]) == (
                b["attributes"],
                b["name"],
                b["status"],
            )


def test_what_is_not_a_trace_is_said_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_bytes(b'{"resourceSpans": "no"}')
    with pytest.raises(CannotRun, match="no spans and no log records"):
        load_trace(other)
    with pytest.raises(CannotRun, match="--format otel takes a trace file"):
        locate_run(tmp_path, fmt=OTEL)
    plain = tmp_path / "plain.json"
    plain.write_bytes(b'{"hello": 1}')
    assert not looks_like_trace(plain)
    with pytest.raises(CannotRun, match="not an OpenTelemetry trace"):
        load_trace(plain)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TRACES)))
def test_replay_tui_verifies_every_recording_to_its_truth(path: Path) -> None:
    """The whole way a user goes: the file found, converted, replayed by the
    rules its format names, and the final state its truth, field by field."""
    from replay_tui.engine.open import open_replay

    replay, _ = open_replay(str(path))
    try:
        replay.verify()
        assert replay.error is None, replay.error
        assert replay.rules.reducer.name == "otel_genai"
        truth = orjson.loads(path.with_name(path.stem + ".truth.json").read_bytes())
        assert compare(truth, replay.final_state()) == []
    finally:
        replay.close()
