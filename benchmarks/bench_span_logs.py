"""One model call span with many log records (its messages as events), checked.

    python benchmarks/bench_span_logs.py [--logs 2500,5000,10000] [--repeat 1]

Writes one OTLP/JSON document per size: a ``chat`` span and --logs log
records tied to it (user, assistant and tool messages in turn, as the newer
GenAI conventions send them), and prints ``check`` seconds per size and the
ratio of each to the one before: 2.0 for twice the logs is linear.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import median_run  # noqa: E402

PY = sys.executable
TRACE, SPAN = "ab" * 16, "cd" * 8
_EVENTS = ("gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message")


def _attr(key: str, value: str) -> dict[str, object]:
    return {"key": key, "value": {"stringValue": value}}


def document(logs: int) -> bytes:
    """One chat span of ``logs`` log records, a millisecond apart."""
    start = 1_700_000_000_000_000_000
    span = {
        "traceId": TRACE,
        "spanId": SPAN,
        "name": "chat model",
        "kind": 3,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + (logs + 1) * 1_000_000),
        "attributes": [_attr("gen_ai.operation.name", "chat"), _attr("gen_ai.system", "x")],
    }
    records = [
        {
            "traceId": TRACE,
            "spanId": SPAN,
            "timeUnixNano": str(start + (i + 1) * 1_000_000),
            "eventName": _EVENTS[i % 3],
            "body": {
                "kvlistValue": {"values": [_attr("content", f"message {i} of the conversation")]}
            },
        }
        for i in range(logs)
    ]
    return orjson.dumps(
        {
            "resourceSpans": [{"scopeSpans": [{"spans": [span]}]}],
            "resourceLogs": [{"scopeLogs": [{"logRecords": records}]}],
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--logs", default="2500,5000,10000", help="log records per run, comma-separated"
    )
    ap.add_argument("--repeat", type=int, default=1, help="check runs per size (median)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="replay-bench-span-logs-"))
    before = None
    print(f"{'logs':>7} {'check s':>8} {'ratio':>6}")
    for n in (int(x) for x in args.logs.split(",")):
        path = work / f"span-{n}.json"
        path.write_bytes(document(n))
        seconds, _rss, _out = median_run([PY, "-m", "replay_tui", "check", str(path)], args.repeat)
        ratio = f"{seconds / before:.2f}" if before else ""
        print(f"{n:>7} {seconds:>8.2f} {ratio:>6}")
        before = seconds


if __name__ == "__main__":
    main()
