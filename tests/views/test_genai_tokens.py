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


def test_a_span_end_row_drawn_before_its_line_is_validated_gets_its_tokens_after() -> None:
    """The timeline draws rows of lines read but not yet validated (a long
    trace while the app proves it): a model span's end drawn then says its
    tokens once its line is in the call index, not never."""
    from replay_tui.engine.replay import Replay
    from replay_tui.formats.run import locate_run
    from replay_tui.reducers import rules_for_run
    from replay_tui.views.runview import RunView
    from tests.conftest import TESTS

    paths = locate_run(TESTS / "fixtures" / "otel-traces" / "adk_py" / "v1_default" / "S2.json")
    replay = Replay(paths, rules_for_run(None, paths.events, paths.format), history=True)
    try:
        replay.advance(limit=3)
        view = RunView(replay)
        assert replay.valid < 8 < view.row_count()
        early = view.row(7).summary  # seq 8: a model span's end, not validated yet
        assert " in/" not in early
        replay.advance()
        replay.finish()
        assert view.row(7).summary.startswith("20 in/5 out · generate_content")
    finally:
        replay.close()
