"""A trace document read a span at a time gives the same events, in the
same order, as reading it whole: every fixture, and generated documents
with any whitespace and escapes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.core.errors import CannotRun
from replay_tui.formats.otel.source import load_trace
from replay_tui.formats.otel.stream import Document, load_document

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DOCUMENTS = sorted(
    p
    for folder in ("otel-traces", "otel-producers")
    for p in (FIXTURES / folder).rglob("*.json")
    if p.is_file()
)


def _whole(path: Path) -> tuple[str, list[bytes]]:
    trace = load_trace(path)
    return trace.sha256, b"".join(trace.envelope_lines()).splitlines()


def _streamed(path: Path) -> tuple[str, list[bytes]]:
    doc = load_document(path)
    return doc.sha256, b"".join(doc.envelope_lines()).splitlines()


def _outcome(read: Any, path: Path) -> Any:
    try:
        return read(path)
    except CannotRun as exc:
        return ("refused", str(exc).split(" (")[0])


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_reads_the_same_streamed(path: Path) -> None:
    assert _outcome(_streamed, path) == _outcome(_whole, path)


def test_an_otlp_document_is_indexed_not_read_whole() -> None:
    otlp = [p for p in DOCUMENTS if b"resourceSpans" in p.read_bytes()[:200]]
    assert otlp
    assert isinstance(load_document(otlp[0]), Document)


_ID = st.text("0123456789abcdef", min_size=1, max_size=3)
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_WS = st.sampled_from(["", " ", "\n", "\t ", "\r\n  "])


def _attr(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """An OTLP document of a few spans and logs, written with random
    whitespace between tokens and escapes in strings."""
    spans, logs = [], []
    for _ in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, 50))
        span: dict[str, Any] = {
            "traceId": draw(st.sampled_from(["a" * 32, "b" * 32])),
            "spanId": draw(_ID).rjust(16, "0"),
            "parentSpanId": draw(st.one_of(st.just(""), _ID.map(lambda s: s.rjust(16, "0")))),
            "name": draw(_TEXT),
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + draw(st.integers(-5, 30))),
            "attributes": [_attr(draw(_TEXT), draw(_TEXT))],
            "events": [
                {"name": draw(_TEXT), "timeUnixNano": str(draw(st.integers(0, 60)))}
                for _ in range(draw(st.integers(0, 2)))
            ],
        }
        spans.append(span)
    for _ in range(draw(st.integers(0, 4))):
        logs.append(
            {
                "traceId": "a" * 32,
                "spanId": draw(_ID).rjust(16, "0"),
                "timeUnixNano": str(draw(st.integers(0, 60))),
                "body": {"stringValue": draw(_TEXT)},
            }
        )
    doc: dict[str, Any] = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", draw(_TEXT))]},
                "scopeSpans": [{"scope": {"name": draw(_TEXT)}, "spans": spans[:3]}],
            },
            {"scopeSpans": [{"spans": spans[3:]}, 7]},
        ],
        "resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}],
    }
    if not spans and not logs:
        doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = [{"spanId": "01", "name": "x"}]
    text = orjson.dumps(doc).decode()
    out, in_string, escaped, hex_left = [], False, False, 0
    for ch in text:  # whitespace between tokens; escaped letters inside strings
        if in_string:
            if hex_left:
                hex_left -= 1
            elif escaped:
                escaped = False
                hex_left = 4 if ch == "u" else 0
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            elif ch.isalpha() and ch.isascii() and draw(st.booleans()):
                ch = f"\\u{ord(ch):04x}"
            out.append(ch)
            continue
        if ch == '"':
            in_string = True
        out.append(ch)
        if ch in "{}[],:":
            out.append(draw(_WS))
    return (draw(_WS) + "".join(out) + draw(_WS)).encode()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=documents())
def test_generated_documents_read_the_same_streamed(raw: bytes, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    streamed, whole = _streamed(path), _whole(path)
    assert streamed == whole
    assert streamed[0] == hashlib.sha256(raw).hexdigest()


@pytest.mark.parametrize(
    "raw",
    [
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "01"} {"spanId": "02"}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a\\"}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "01"}]}]}]} trailing',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": 01x}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "01"]}]}]}',
    ],
)
def test_a_broken_document_is_refused_in_one_line(raw: bytes, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    with pytest.raises(CannotRun, match="not one JSON document"):
        load_document(path)


@pytest.mark.parametrize("path", DOCUMENTS[::7], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_values_past_the_reading_window_are_walked_alike(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value longer than orjson is asked to read at once (a span of many
    megabytes) is walked bracket by bracket: the same events."""
    monkeypatch.setattr("replay_tui.formats.otel.scan._WINDOW_FIRST", 8)
    monkeypatch.setattr("replay_tui.formats.otel.scan._WINDOW_LAST", 8)
    assert _outcome(_streamed, path) == _outcome(_whole, path)


def test_a_compact_document_checked_complete_is_indexed(tmp_path: Path) -> None:
    """A compact export is one line, its first key on it: checked complete
    it is indexed a span at a time, not read whole as one Collector line;
    followed, it is read as the Collector's lines. The events are the same."""
    from replay_tui.engine.replay_core import open_ledger
    from replay_tui.formats.otel.lines import TraceLedger, TraceLinesLedger
    from replay_tui.formats.run import OTEL, RunPaths

    source = next(p for p in DOCUMENTS if b"resourceSpans" in p.read_bytes()[:200])
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps(orjson.loads(source.read_bytes())) + b"\n")
    cold = open_ledger(RunPaths(tmp_path, path, OTEL))
    followed = open_ledger(RunPaths(tmp_path, path, OTEL), following=True)
    assert isinstance(cold, TraceLedger)
    assert isinstance(followed, TraceLinesLedger)
    cold_lines = [line for _, chunk in cold.scan_chunks() for line in chunk]
    followed_lines = [line for _, chunk in followed.scan_chunks() for line in chunk]
    assert cold_lines == followed_lines
    assert cold.sha256() == followed.sha256()


def test_a_document_cut_short_after_indexing_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """Records are read again when their events are written: a file cut
    short in between says so in one line (a mapped file cut short would
    kill the process)."""
    source = next(p for p in DOCUMENTS if b"resourceSpans" in p.read_bytes()[:200])
    path = tmp_path / "trace.json"
    path.write_bytes(source.read_bytes())
    doc = load_document(path)
    with path.open("r+b") as f:
        f.truncate(10)
    with pytest.raises(CannotRun, match="changed while it was read"):
        b"".join(doc.envelope_lines())
