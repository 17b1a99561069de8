"""A model span's tokens, from its own records, in the otel_genai rules'
order: the span's attributes, then its details event or log, then ADK's."""

from __future__ import annotations

from typing import Any

import orjson

from replay_tui.formats.envelope import Event, parse_line
from replay_tui.views.genai_tokens import span_tokens

DETAILS = "gen_ai.client.inference.operation.details"


def _event(kind: str, payload: dict[str, Any]) -> Event:
    raw = orjson.dumps({"seq": 1, "run_id": "t", "kind": kind, "payload": payload})
    event = parse_line(raw, 1, 0)
    assert isinstance(event, Event)
    return event


def test_the_span_attributes_come_first_then_details_then_adk() -> None:
    adk = {"gcp.vertex.agent.llm_response": '{"usage_metadata": {"prompt_token_count": 7, '
           '"candidates_token_count": 3}}'}  # fmt: skip
    start_adk = _event("span_start", {"attributes": adk})
    log = _event("log", {"event_name": DETAILS, "attributes": {"gen_ai.usage.input_tokens": 40,
                                                               "gen_ai.usage.output_tokens": 9}})  # fmt: skip
    start = _event("span_start", {"attributes": {"gen_ai.usage.prompt_tokens": 12,
                                                 "gen_ai.usage.completion_tokens": 5}})  # fmt: skip
    assert span_tokens([start_adk]) == (7, 3)
    assert span_tokens([start_adk, log]) == (40, 9)  # details before ADK's
    assert span_tokens([start, log]) == (12, 5)  # the span's own (old names too) first
    other = _event("log", {"event_name": "gen_ai.user.message",
                           "attributes": {"gen_ai.usage.input_tokens": 1}})  # fmt: skip
    end = _event("span_end", {"name": "chat"})
    assert span_tokens([other, end, None]) is None
