"""``check`` of a large OpenTelemetry trace against an events.jsonl of the same size.

    python benchmarks/bench_traces.py [--spans 100000] [--repeat 3] [--source FILE]

Writes (deterministically) one OTLP/JSON document of at least --spans spans
by repeating a recorded trace (default: the ADK run with tools,
``tests/fixtures/otel-traces/adk_py/v2_event_only/S2.json``, whose content
comes as log records too): each repetition is a trace of its own (a fresh
trace id) a minute after the one before. The baseline, in the same run, is
a generated agent run (``synth/runs``) whose events.jsonl has about the
same bytes.

With --one-trace, the repetitions are one trace (span ids made unique), as
a long agent run's single trace is. The same traces are also written as
the Collector's file exporter writes
them (``trace.jsonl``: one export request a line, here a trace a line),
which is read a line at a time.

Prints, for each: bytes, records (events), spans, ``check`` seconds and peak
RSS (whole process, median of --repeat), and the ratios.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import median_run  # noqa: E402
from benchmarks.bench_sessions import ledger  # noqa: E402

PY = sys.executable
SOURCE = ROOT / "tests" / "fixtures" / "otel-traces" / "adk_py" / "v2_event_only" / "S2.json"
_TIME_KEYS = ("startTimeUnixNano", "endTimeUnixNano", "timeUnixNano", "observedTimeUnixNano")


def _shift(node: Any, trace_id: str, by_ns: int, span_tag: str = "") -> None:
    """Move every time in ``node`` by ``by_ns`` and give it ``trace_id``
    (and, with ``span_tag``, span ids of their own)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _TIME_KEYS and value:
                node[key] = str(int(value) + by_ns)
            elif key == "traceId" and value:
                node[key] = trace_id
            elif key in ("spanId", "parentSpanId") and value and span_tag:
                node[key] = span_tag + value[len(span_tag) :]
            else:
                _shift(value, trace_id, by_ns, span_tag)
    elif isinstance(node, list):
        for item in node:
            _shift(item, trace_id, by_ns, span_tag)


def _spans(doc: dict[str, Any]) -> int:
    return sum(
        len(ss.get("spans", []))
        for rs in doc.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
    )


def trace_id(rep: int) -> str:
    """The ``rep``-th trace's id: 32 hex digits that look random, as real
    ones do (an id of zeros and a count, ``000...001``, has a run of 20
    decimal digits that sends every record of it, and every converted line,
    through the exact reading of integers past 64 bits: a cost no real trace
    pays)."""
    return hashlib.blake2b(rep.to_bytes(8, "big"), digest_size=16).hexdigest()


def trace(
    dest: Path, lines: Path, source: Path, spans: int, one_trace: bool = False
) -> tuple[int, int, int]:
    """Write the repeated trace as one document and as JSON lines;
    (document bytes, lines bytes, spans). With ``one_trace``, every
    repetition is part of one trace (a long agent run's)."""
    doc = orjson.loads(source.read_bytes())
    per = _spans(doc)
    reps = max(1, -(-spans // per))
    out: dict[str, list[Any]] = {"resourceSpans": [], "resourceLogs": []}
    with lines.open("wb") as each:
        for rep in range(reps):
            one = copy.deepcopy(doc)
            if one_trace:
                _shift(one, "ab" * 16, rep * 60_000_000_000, f"{rep:08x}")
            else:
                _shift(one, trace_id(rep), rep * 60_000_000_000)
            out["resourceSpans"] += one.get("resourceSpans", [])
            out["resourceLogs"] += one.get("resourceLogs", [])
            each.write(orjson.dumps(one) + b"\n")
    data = orjson.dumps(out)
    dest.write_bytes(data)
    return len(data), lines.stat().st_size, reps * per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=100_000, help="spans in the trace, at least")
    ap.add_argument("--repeat", type=int, default=3, help="check runs per source (median)")
    ap.add_argument("--source", type=Path, default=SOURCE, help="an OTLP/JSON trace to repeat")
    ap.add_argument(
        "--one-trace", action="store_true", help="every repetition in one trace, not one each"
    )
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="replay-bench-traces-"))
    work.mkdir(parents=True, exist_ok=True)
    path, jsonl = work / "trace.json", work / "trace.jsonl"
    t_bytes, j_bytes, t_spans = trace(path, jsonl, args.source, args.spans, args.one_trace)
    run = work / "run"
    l_bytes, _ = ledger(run, t_bytes)
    rows = []
    for name, target, size, spans in (
        ("events.jsonl", run, l_bytes, 0),
        ("otel trace", path, t_bytes, t_spans),
        ("otel lines", jsonl, j_bytes, t_spans),
    ):
        seconds, rss, out = median_run([PY, "-m", "replay_tui", "check", str(target)], args.repeat)
        verdict = out.splitlines()[0] if out else "?"
        assert ": verified:" in verdict, verdict
        events = int(verdict.split(": verified: ")[1].split(" events")[0])
        rows.append((name, size, events, spans, seconds, rss))
    shape = "in one trace" if args.one_trace else "a trace per repetition"
    print(f"{t_spans:,} spans, {shape} (median of {args.repeat} check runs), in {work}")
    head = ("MB", 7), ("events", 9), ("spans", 8), ("check s", 8), ("µs/event", 9), ("RSS MiB", 8)
    print(f"{'source':<14} " + " ".join(f"{name:>{width}}" for name, width in head))
    for name, size, events, spans, seconds, rss in rows:
        print(
            f"{name:<14} {size / 1e6:7.1f} {events:9,} {spans:8,} {seconds:8.2f} "
            f"{seconds / events * 1e6:9.1f} {rss:8.0f}"
        )
    (_, _, le, _, ls, _), *traces = rows
    for name, _, te, _, ts, _ in traces:
        print(
            f"{name} / ledger: check {ts / ls:.2f}x for the same bytes "
            f"({(ts / te) / (ls / le):.2f}x per event)"
        )


if __name__ == "__main__":
    main()
