"""``replay-tui usage TRACE``: an OpenTelemetry trace's tokens per turn and
model, as a table or in the JSON document, beside sessions' (exit 0)."""

from __future__ import annotations

import orjson
import pytest

from replay_tui.cli import main
from tests.conftest import SAMPLES

TRACE = SAMPLES / "traces" / "agentevals--adk_py-v2_span_only-S3.json"
ROLLOUT = SAMPLES / "agent-sessions" / "codex-rollout.jsonl"


def test_usage_of_a_trace_is_a_table_per_turn_and_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["usage", str(TRACE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"OpenTelemetry trace {TRACE}, by turn (otel_genai 1.0.0)"
    assert lines[1].split() == [
        "TURN",
        "MODEL",
        "INPUT",
        "OUTPUT",
        "CACHE",
        "READ",
        "CACHE",
        "CREATE",
    ]
    assert lines[2].split() == [
        "1",
        "Hi,",
        "my",
        "name",
        "is",
        "Ada.",
        "gemini-2.5-flash",
        "10",
        "8",
        "0",
        "0",
    ]
    assert lines[3].split()[-5:] == ["gemini-2.5-flash", "80", "14", "0", "0"]
    assert lines[5].split() == ["total", "(3", "turns)", "160", "26", "0", "0"]
    assert lines[6].split() == ["gemini-2.5-flash", "160", "26", "0", "0"]
    assert len({len(line) for line in lines[1:7]}) == 1  # the columns line up
    assert any("4 model calls counted, each once" in line for line in lines)


def test_usage_json_holds_the_trace_beside_the_sessions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["usage", "--json", str(ROLLOUT), str(TRACE)]) == 0
    doc = orjson.loads(capsys.readouterr().out)
    assert [s["source"] for s in doc["sources"]] == ["codex"]
    (trace,) = doc["traces"]
    assert trace["tokens"] == {
        "input_tokens": 160,
        "output_tokens": 26,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    assert [t["tokens"]["input_tokens"] for t in trace["turns"]] == [10, 80, 70]
    assert list(trace["models"]) == ["gemini-2.5-flash"] and trace["llm_calls"] == 4
    assert trace["stopped"] is None and trace["events"] == 34
