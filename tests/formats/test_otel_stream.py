"""A trace document read a span at a time gives the same events, in the
same order, as reading it whole: every fixture, and generated documents
with any whitespace and escapes."""

from __future__ import annotations

import hashlib
import sys
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


#: Few ids: the same span exported twice, children and logs of either copy.
_FEW_IDS = st.sampled_from(["1", "2", "3"])


@st.composite
def documents(draw: st.DrawFn, ids: st.SearchStrategy[str] = _ID, most: int = 6) -> bytes:
    """An OTLP document of a few spans and logs, written with random
    whitespace between tokens and escapes in strings."""
    spans, logs = [], []
    for _ in range(draw(st.integers(0, most))):
        start = draw(st.integers(0, 50))
        span: dict[str, Any] = {
            "traceId": draw(st.sampled_from(["a" * 32, "b" * 32])),
            "spanId": draw(ids).rjust(16, "0"),
            "parentSpanId": draw(st.one_of(st.just(""), ids.map(lambda s: s.rjust(16, "0")))),
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
                "spanId": draw(st.one_of(st.just(""), ids)).rjust(16, "0"),
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


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=documents(ids=_FEW_IDS, most=9))
def test_copies_parents_and_logs_of_few_ids_read_the_same_streamed(
    raw: bytes, tmp_path: Path
) -> None:
    """Spans of three ids: copies of one span, children and logs of a span
    exported twice, each naming the first copy started before it (the
    streamed reader works this out from the order, not as it writes)."""
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    assert _streamed(path) == _whole(path)


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


def _big_document(path: Path, spans: int, pad: int) -> int:
    """A document of ``spans`` spans of about ``pad`` bytes each, written
    as bytes (no parse of the whole): its size."""
    with path.open("wb") as f:
        f.write(b'{"resourceSpans": [{"scopeSpans": [{"spans": [\n')
        for i in range(spans):
            if i:
                f.write(b",\n")
            span = {
                "traceId": f"{i // 10 + 1:08x}".rjust(32, "f"),
                "spanId": f"{i + 1:016x}",
                "parentSpanId": f"{i:016x}" if i % 10 else "",
                "name": "call_llm",
                "startTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1000),
                "endTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1000 + 500),
                "attributes": [_attr("gen_ai.prompt", "x" * pad)],
            }
            f.write(orjson.dumps(span))
        f.write(b"\n]}]}]}\n")
    return path.stat().st_size


def test_the_index_keeps_a_few_integers_per_record(tmp_path: Path) -> None:
    """Once ordered, a document's index holds integers in arrays: well
    under 100 bytes a record (tuples and dicts of ids took about 300)."""
    import tracemalloc

    path = tmp_path / "t.json"
    _big_document(path, 20_000, 10)
    # only what the reading made counts: a thread another test left running
    # (a server, a watcher) allocates in this process too
    ours = [tracemalloc.Filter(True, "*/replay_tui/formats/*", all_frames=True)]
    tracemalloc.start(40)
    try:
        before = tracemalloc.take_snapshot().filter_traces(ours)
        doc = load_document(path)
        after = tracemalloc.take_snapshot().filter_traces(ours)
        kept = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    assert isinstance(doc, Document) and len(doc) == 40_000
    assert 0 < kept / len(doc) < 100, f"{kept / len(doc):.0f} bytes a record"
    doc.close()


#: The process's own peak (VmHWM: ru_maxrss would count the forked parent's).
_PEAK = """
import re, sys
from pathlib import Path
from replay_tui.formats.otel.stream import load_document
if sys.argv[1] != "-":
    doc = load_document(Path(sys.argv[1]))
print(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's peak RSS")
def test_indexing_a_big_document_does_not_hold_its_pages(tmp_path: Path) -> None:
    """The mapped file's pages are let go of behind each walk (and as it is
    hashed): indexing a 48 MB document raises the process's peak resident
    memory by a part of its size (16 MiB, was 61), not by all of it."""
    import subprocess

    path = tmp_path / "t.json"
    size = _big_document(path, 12_000, 4000)

    def peak(arg: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, arg], capture_output=True, check=True, text=True
        )
        return int(done.stdout) * 1024

    grown = peak(str(path)) - peak("-")
    assert grown < size / 2, f"{grown >> 20} MiB more for a {size >> 20} MiB document"
