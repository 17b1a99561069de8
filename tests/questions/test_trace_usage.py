"""A trace's tokens, per turn and model, are the otel_genai rules' count:
each logical model call once; cache tokens from the same calls' spans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay_tui.questions.trace_usage import trace_usage
from tests.conftest import ROOT, SAMPLES

CORPUS = ROOT / "tests" / "fixtures" / "otel-traces"
TRACE = SAMPLES / "traces" / "agentevals--adk_py-v2_span_only-S3.json"
TRUTHS = sorted(CORPUS.rglob("*.truth.json"))


@pytest.mark.parametrize("truth", TRUTHS, ids=[str(t.relative_to(CORPUS)) for t in TRUTHS])
def test_a_trace_counts_the_tokens_its_truth_says(truth: Path) -> None:
    want = json.loads(truth.read_text())
    usage = trace_usage(truth.with_name(truth.name.replace(".truth.json", ".json")))
    assert usage.stopped is None
    assert usage.total()[:2] == [want["tokens"]["input"], want["tokens"]["output"]]
    by_model = [sum(v[i] for v in usage.by_model().values()) for i in range(4)]
    assert by_model == usage.total()  # every token is some model's
    if not want.get("extra_turns_allowed"):
        got = [turn.total()[:2] for turn in usage.turns]
        assert got == [[t["tokens"]["input"], t["tokens"]["output"]] for t in want["turns"]]


def test_the_sample_trace_per_turn_and_model() -> None:
    usage = trace_usage(TRACE)
    assert (usage.rules, usage.events, usage.calls) == ("otel_genai 1.0.0", 34, 4)
    assert [(t.user_text, t.models) for t in usage.turns] == [
        ("Hi, my name is Ada.", {"gemini-2.5-flash": [10, 8, 0, 0]}),
        ("What is the weather in Rome?", {"gemini-2.5-flash": [80, 14, 0, 0]}),
        ("Thanks, bye!", {"gemini-2.5-flash": [70, 4, 0, 0]}),
    ]


def test_cache_tokens_count_once_per_call(tmp_path: Path) -> None:
    """The GenAI conventions' cache counts on the provider's spans: each
    call's once, though a wrapper span (ADK's call_llm) holds each call too."""
    doc = json.loads(TRACE.read_text())
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                if span["name"].startswith(("generate_content", "call_llm")):
                    span["attributes"] += [
                        {"key": "gen_ai.usage.cache_read.input_tokens", "value": {"intValue": "4"}},
                        {
                            "key": "gen_ai.usage.cache_creation.input_tokens",
                            "value": {"intValue": "2"},
                        },
                    ]
    cached = tmp_path / "cached.json"
    cached.write_text(json.dumps(doc))
    usage = trace_usage(cached)
    assert usage.total() == [160, 26, 16, 8]
    assert [t.total()[2:] for t in usage.turns] == [[4, 2], [8, 4], [4, 2]]
