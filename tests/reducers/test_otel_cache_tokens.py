"""Cache tokens in traces: every convention's names for them are read,
counted in the state (``tokens.cache_read`` / ``cache_write``) and priced at
the cache-read and cache-write rates, not as plain input. The input holds
them, as the conventions count it (OpenAI's and Gemini's APIs too); an input
smaller than its cache counts was said apart (Anthropic's API) and they are
added to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.engine.open import open_replay
from replay_tui.reducers import pricing
from replay_tui.reducers.base import State
from tests.conftest import SAMPLES
from tests.helpers.otel_attribution import CHAT1, ROOT, SEC, T0, span_record

CLAUDE, GPT = "claude-sonnet-4-5", "gpt-4o"
SAMPLE = SAMPLES / "traces" / "agentevals--adk_py-v2_span_only-S3.json"


def _trace(tmp: Path, model: str, usage: dict[str, int]) -> State:
    """One agent turn with one model call whose span says ``usage``."""
    spans = [
        span_record(
            ROOT,
            "",
            "invoke_agent a",
            T0,
            T0 + 9 * SEC,
            **{"gen_ai.operation.name": "invoke_agent"},
        ),
        span_record(
            CHAT1,
            ROOT,
            f"chat {model}",
            T0 + SEC,
            T0 + 2 * SEC,
            **{"gen_ai.operation.name": "chat", "gen_ai.request.model": model, **usage},
        ),
    ]
    doc = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}
    path = tmp / "trace.json"
    path.write_bytes(orjson.dumps(doc))
    replay, _ = open_replay(str(path), fmt="otel")
    try:
        replay.verify()
        assert replay.error is None
        return replay.final_state()
    finally:
        replay.close()


def _usd(model: str, tokens: pricing.Tokens) -> float:
    micros = pricing.price(model, None, tokens, (T0 + SEC) / 1e9)
    assert micros is not None
    return pricing.usd(micros)


#: (the attributes, the model, input (cache included), output, cache read, cache write)
CASES: dict[str, tuple[dict[str, Any], str, int, int, int, int]] = {
    "genai conventions": (
        {
            "gen_ai.usage.input_tokens": 10_000,
            "gen_ai.usage.output_tokens": 500,
            "gen_ai.usage.cache_read.input_tokens": 8_000,
            "gen_ai.usage.cache_creation.input_tokens": 1_000,
        },
        CLAUDE,
        10_000,
        500,
        8_000,
        1_000,
    ),
    "openllmetry": (
        {
            "gen_ai.usage.prompt_tokens": 10_000,
            "gen_ai.usage.completion_tokens": 500,
            "gen_ai.usage.cache_read_input_tokens": 8_000,
            "gen_ai.usage.cache_creation_input_tokens": 1_000,
        },
        CLAUDE,
        10_000,
        500,
        8_000,
        1_000,
    ),
    "openinference": (
        {
            "openinference.span.kind": "LLM",
            "llm.token_count.prompt": 10_000,
            "llm.token_count.completion": 500,
            "llm.token_count.prompt_details.cache_read": 6_000,
        },
        GPT,
        10_000,
        500,
        6_000,
        0,
    ),
    "said apart, as anthropic's api says it": (
        {
            "gen_ai.usage.input_tokens": 1_000,
            "gen_ai.usage.output_tokens": 500,
            "gen_ai.usage.cache_read.input_tokens": 8_000,
            "gen_ai.usage.cache_creation.input_tokens": 1_000,
        },
        CLAUDE,
        10_000,
        500,
        8_000,
        1_000,
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_cache_tokens_are_counted_and_priced_at_the_cache_rates(tmp_path: Path, case: str) -> None:
    attrs, model, inp, out, read, write = CASES[case]
    state = _trace(tmp_path, model, attrs)
    want = {"input": inp, "output": out, "cache_read": read, "cache_write": write}
    assert state["tokens"] == want
    [turn] = state["turns"]
    assert turn["tokens"] == want
    cached = pricing.Tokens(
        input=inp - read - write, output=out, cache_read=read, cache_write=write
    )
    as_input = pricing.Tokens(input=inp, output=out)
    assert state["cost"]["total"] == turn["cost"]["usd"] == _usd(model, cached)
    assert _usd(model, cached) < _usd(model, as_input)  # a cache read costs less than input


def test_a_trace_without_cache_counts_says_zero() -> None:
    replay, _ = open_replay(str(SAMPLE), fmt="otel")
    try:
        replay.verify()
        state = replay.final_state()
    finally:
        replay.close()
    assert state["tokens"] == {"input": 160, "output": 26, "cache_read": 0, "cache_write": 0}
