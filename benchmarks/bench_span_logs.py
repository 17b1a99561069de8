"""One model call span with many log records (its messages as events), checked.

    python benchmarks/bench_span_logs.py [--logs 1000,2500,5000,10000] [--repeat 3]

Writes, per size, an OTLP/JSON document of one ``chat`` span and --logs log
records tied to it (user, assistant and tool messages in turn, as the older
GenAI conventions send them) and, as the baseline measured in the same run,
an events.jsonl of the same bytes (a generated agent run, which strict
replay reads in linear time). Each is checked in this process (the median
of --repeat runs of the engine behind ``check``, so the process starting is
not in the figures), and the span's time is printed per log and over the
ledger's: linear is the same figures at every size. Before the rules kept a
span's message summaries as its logs came, one span of 4,000 logs took 27 s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_sessions import ledger  # noqa: E402

TRACE, SPAN = "ab" * 16, "cd" * 8
_EVENTS = ("gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message")


def _attr(key: str, value: str) -> dict[str, object]:
    return {"key": key, "value": {"stringValue": value}}


def _span(sid: str, start: int, logs: int) -> dict[str, object]:
    return {
        "traceId": TRACE,
        "spanId": sid,
        "name": "chat model",
        "kind": 3,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + (logs + 1) * 1_000_000),
        "attributes": [_attr("gen_ai.operation.name", "chat"), _attr("gen_ai.system", "x")],
    }


def document(logs: int, per_span: int | None = None) -> bytes:
    """``logs`` log records a millisecond apart, all in one chat span, or
    ``per_span`` to a span (spans one after another)."""
    start = 1_700_000_000_000_000_000
    size = per_span or max(logs, 1)
    spans, records = [], []
    for first in range(0, max(logs, 1), size):
        sid = f"{first // size + 1:016x}" if per_span else SPAN
        count = min(size, logs - first)
        at = start + first * 2_000_000
        spans.append(_span(sid, at, count))
        records += [
            {
                "traceId": TRACE,
                "spanId": sid,
                "timeUnixNano": str(at + (i - first + 1) * 1_000_000),
                "eventName": _EVENTS[i % 3],
                "body": {
                    "kvlistValue": {
                        "values": [_attr("content", f"message {i} of the conversation")]
                    }
                },
            }
            for i in range(first, first + count)
        ]
    return orjson.dumps(
        {
            "resourceSpans": [{"scopeSpans": [{"spans": spans}]}],
            "resourceLogs": [{"scopeLogs": [{"logRecords": records}]}],
        }
    )


def _checked(target: Path, repeat: int) -> float:
    """The median seconds of strict replay of ``target`` here (the engine behind ``check``)."""
    from replay_tui.engine.open import open_replay

    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        replay, _dog = open_replay(str(target))
        try:
            replay.verify()
            assert replay.error is None, replay.error
        finally:
            replay.close()
        times.append(time.perf_counter() - began)
    return sorted(times)[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--logs", default="1000,2500,5000,10000", help="log records per run, comma-separated"
    )
    ap.add_argument("--repeat", type=int, default=3, help="check runs per size (median)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="replay-bench-span-logs-"))
    _checked(ROOT / "sample_runs" / "traces" / "agentevals--adk_py-v2_span_only-S3.json", 1)
    head = (
        ("logs", 7),
        ("MB", 5),
        ("span s", 7),
        ("µs/log", 7),
        ("ledger s", 9),
        ("span/ledger", 12),
    )
    print(" ".join(f"{name:>{width}}" for name, width in head))
    for n in (int(x) for x in args.logs.split(",")):
        path = work / f"span-{n}.json"
        path.write_bytes(document(n))
        run = work / f"ledger-{n}" / "run"
        run.parent.mkdir()
        size, _lines = ledger(run, path.stat().st_size)
        span = _checked(path, args.repeat)
        base = _checked(run, args.repeat)
        print(
            f"{n:>7,} {size / 1e6:5.1f} {span:7.2f} {span / n * 1e6:7.0f}"
            f" {base:9.2f} {span / base:12.2f}"
        )


if __name__ == "__main__":
    main()
