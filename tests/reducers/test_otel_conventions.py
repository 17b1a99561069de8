"""Conventions read by what the spans carry: content blocks in every
provider's shape, OpenInference's flattened attributes, an agent's answer
that differs from its model's only by whitespace, and content not captured
(null, never ``{}``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.open import open_replay
from replay_tui.reducers.base import State

TRACE = "ef" * 16
AGENT, CHAT1, TOOL1, TOOL2, CHAT2 = "a1" * 8, "c1" * 8, "d1" * 8, "d2" * 8, "c2" * 8
T0 = 1_760_000_000_000_000_000
SEC = 1_000_000_000


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    return {"stringValue": v if isinstance(v, str) else orjson.dumps(v).decode()}


def _attrs(items: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in items.items()]


def _span(
    sid: str,
    parent: str,
    name: str,
    at: int,
    attrs: dict[str, Any],
    events: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    error: bool = False,
) -> dict[str, Any]:
    start = T0 + at * SEC
    return {
        "traceId": TRACE,
        "spanId": sid,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + SEC // 2),
        "attributes": _attrs(attrs),
        "events": [
            {"name": n, "timeUnixNano": str(start + i + 1), "attributes": _attrs(a)}
            for i, (n, a) in enumerate(events)
        ],
        "status": {"code": 2} if error else {},
    }


def _state(tmp: Path, spans: list[dict[str, Any]]) -> State:
    path = tmp / "trace.json"
    doc = {
        "resourceSpans": [
            {"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}
        ]
    }
    path.write_bytes(orjson.dumps(doc))
    replay, watchdog = open_replay(str(path), fmt="otel")
    try:
        replay.verify()
        return replay.final_state()
    finally:
        replay.close()
        if watchdog is not None:
            watchdog.stop()


CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
ASK = "Weather in Paris and Atlantis?"

#: One model call's answer (words, then two tool calls) and the next call's
#: tool results (Paris's, then Atlantis's, which failed), in each provider's blocks.
SHAPES: dict[str, tuple[list[Any], list[Any]]] = {
    "anthropic": (
        [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "t2", "name": "weather", "input": {"city": "Atlantis"}},
        ],
        [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [{"type": "text", "text": '{"temp": 21}'}],
            },
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": "no such city",
                "is_error": True,
            },
        ],
    ),
    "bedrock": (
        [
            {"text": "Checking."},
            {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Paris"}}},
            {"toolUse": {"toolUseId": "t2", "name": "weather", "input": {"city": "Atlantis"}}},
        ],
        [
            {
                "toolResult": {
                    "toolUseId": "t1",
                    "status": "success",
                    "content": [{"json": {"temp": 21}}],
                }
            },
            {
                "toolResult": {
                    "toolUseId": "t2",
                    "status": "error",
                    "content": [{"text": "no such city"}],
                }
            },
        ],
    ),
    "openai_responses": (
        [
            {"type": "text", "text": "Checking."},
            {
                "type": "function_call",
                "call_id": "t1",
                "name": "weather",
                "arguments": '{"city": "Paris"}',
            },
            {
                "type": "function_call",
                "call_id": "t2",
                "name": "weather",
                "arguments": '{"city": "Atlantis"}',
            },
        ],
        [
            {"type": "function_call_output", "call_id": "t1", "output": '{"temp": 21}'},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": "no such city",
                "is_error": True,
            },
        ],
    ),
    "gemini": (
        [
            {"text": "Checking."},
            {"functionCall": {"id": "t1", "name": "weather", "args": {"city": "Paris"}}},
            {"functionCall": {"id": "t2", "name": "weather", "args": {"city": "Atlantis"}}},
        ],
        [
            {"functionResponse": {"id": "t1", "name": "weather", "response": {"temp": 21}}},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": "no such city",
                "is_error": True,
            },
        ],
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_content_blocks_of_every_provider_as_json_text_in_the_older_events(
    tmp_path: Path, shape: str
) -> None:
    """Content blocks (as JSON text, the way Strands writes its span events):
    the words, each tool's arguments and result, and the failed one."""
    answer, results = SHAPES[shape]
    user = ("gen_ai.user.message", {"content": orjson.dumps([{"text": ASK}]).decode()})
    spans = [
        _span(AGENT, "", "invoke_agent a", 0, {"gen_ai.operation.name": "invoke_agent"}),
        _span(
            CHAT1,
            AGENT,
            "chat m",
            0,
            CHAT,
            [user, ("gen_ai.choice", {"message": orjson.dumps(answer).decode()})],
        ),
        _span(
            CHAT2,
            AGENT,
            "chat m",
            2,
            CHAT,
            [
                user,
                ("gen_ai.assistant.message", {"content": orjson.dumps(answer).decode()}),
                ("gen_ai.tool.message", {"content": orjson.dumps(results).decode()}),
                ("gen_ai.choice", {"message": "Sunny in Paris; no Atlantis."}),
            ],
        ),
    ]
    state = _state(tmp_path, spans)
    [turn] = state["turns"]
    assert turn["user_text"] == ASK
    calls = [(t["args"], t["result"], t["is_error"]) for t in turn["tool_calls"]]
    assert calls == [
        ({"city": "Paris"}, {"temp": 21}, False),
        ({"city": "Atlantis"}, "no such city", True),
    ]
    assert turn["intermediate_texts"] == ["Checking."]


def test_openinference_contents_and_a_tool_span_with_its_call(tmp_path: Path) -> None:
    """OpenInference: messages as ``contents.K.message_content`` parts, a
    TOOL span saying its call's arguments; the tokens from llm.token_count."""
    llm = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": ASK,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.contents.0.message_content.type": "text",
        "llm.output_messages.0.message.contents.0.message_content.text": "Sunny.",
        "llm.token_count.prompt": 12,
        "llm.token_count.completion": 3,
    }
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "weather",
        "tool_call.id": "t1",
        "tool_call.function.arguments": '{"city": "Paris"}',
        "output.value": '{"temp": 21}',
        "output.mime_type": "application/json",
    }
    chain = {"openinference.span.kind": "CHAIN", "input.value": ASK}
    spans = [
        _span(AGENT, "", "Agent.run", 0, {"openinference.span.kind": "AGENT"}),
        _span("e1" * 8, AGENT, "step", 0, chain),
        _span(TOOL1, "e1" * 8, "weather", 1, tool),
        _span(CHAT1, "e1" * 8, "ChatCompletion", 2, llm),
    ]
    state = _state(tmp_path, spans)
    [turn] = state["turns"]
    assert (turn["user_text"], turn["final_text"]) == (ASK, "Sunny.")
    assert [(t["name"], t["args"], t["result"]) for t in turn["tool_calls"]] == [
        ("weather", {"city": "Paris"}, {"temp": 21})
    ]
    assert state["tokens"] == {"input": 12, "output": 3, "cache_read": 0, "cache_write": 0}


def _content_off(tmp: Path, words: bool) -> State:
    """A model call and a tool whose recorder wrote ``{}`` for its
    arguments and result; the call's messages with their words or without."""
    text = {"type": "text", "content": ASK} if words else {"type": "text"}
    msgs = {"gen_ai.input.messages": [{"role": "user", "parts": [text]}]}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "ping",
        "gen_ai.tool.call.arguments": "{}",
        "gen_ai.tool.call.result": "{}",
    }
    spans = [
        _span(AGENT, "", "invoke_agent a", 0, {"gen_ai.operation.name": "invoke_agent"}),
        _span(CHAT1, AGENT, "chat m", 0, {**CHAT, **msgs}),
        _span(TOOL1, AGENT, "execute_tool ping", 1, tool),
    ]
    return _state(tmp, spans)


def test_empty_arguments_written_with_content_off_are_not_captured(tmp_path: Path) -> None:
    state = _content_off(tmp_path, words=False)
    [tool] = state["turns"][0]["tool_calls"]
    assert (tool["args"], tool["result"]) == (None, None)
    assert state["content_captured"] is False


def test_empty_arguments_with_content_on_are_no_arguments(tmp_path: Path) -> None:
    state = _content_off(tmp_path, words=True)
    [tool] = state["turns"][0]["tool_calls"]
    assert (tool["args"], tool["result"]) == ({}, {})
    assert state["content_captured"] is True


@given(
    before=st.text(" \n\t", max_size=3),
    after=st.text(" \n\t", min_size=1, max_size=3),
)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_whitespace_at_the_ends_makes_no_second_answer(
    tmp_path: Path, before: str, after: str
) -> None:
    """The agent's answer (as its span says it) with whitespace around it is
    its last model call's answer: the final text, not also an intermediate one."""
    agent_out = [
        {"role": "assistant", "parts": [{"type": "text", "content": before + "Sunny." + after}]}
    ]
    out = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
    inp = [{"role": "user", "parts": [{"type": "text", "content": ASK}]}]
    spans = [
        _span(
            AGENT,
            "",
            "invoke_agent a",
            0,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.output.messages": agent_out},
        ),
        _span(
            CHAT1,
            AGENT,
            "chat m",
            0,
            {**CHAT, "gen_ai.input.messages": inp, "gen_ai.output.messages": out},
        ),
    ]
    [turn] = _state(tmp_path, spans)["turns"]
    assert (turn["final_text"], turn["intermediate_texts"]) == ("Sunny.", [])


def test_openinference_spans_with_only_their_input_and_output_values(tmp_path: Path) -> None:
    """Without the flattened messages: an AGENT span's plain-text input and
    output are the user's words and the answer; an LLM span's JSON values
    are the OpenAI request and response; ``__REDACTED__`` is not captured."""
    request = {"model": "m", "messages": [{"role": "user", "content": ASK}]}
    response = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "Checking.",
                    "tool_calls": [
                        {
                            "id": "t1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                }
            }
        ]
    }
    llm = {
        "openinference.span.kind": "LLM",
        "input.value": orjson.dumps(request).decode(),
        "input.mime_type": "application/json",
        "output.value": orjson.dumps(response).decode(),
        "output.mime_type": "application/json",
    }
    agent = {
        "openinference.span.kind": "AGENT",
        "input.value": ASK,
        "input.mime_type": "text/plain",
        "output.value": "Sunny in Paris.",
    }
    hidden = {"openinference.span.kind": "LLM", "input.value": "__REDACTED__"}
    spans = [
        _span(AGENT, "", "Agent.run", 0, agent),
        _span(CHAT1, AGENT, "ChatCompletion", 1, llm),
        _span(CHAT2, AGENT, "ChatCompletion", 2, hidden),
    ]
    state = _state(tmp_path, spans)
    [turn] = state["turns"]
    assert (turn["user_text"], turn["final_text"]) == (ASK, "Sunny in Paris.")
    assert turn["intermediate_texts"] == ["Checking."]
    assert [(t["name"], t["args"]) for t in turn["tool_calls"]] == [("weather", {"city": "Paris"})]
    assert turn["llm_calls"] == 2


def test_a_tool_span_s_own_message_events_give_its_arguments_and_result(tmp_path: Path) -> None:
    """Strands' tool span: ``gen_ai.tool.message`` holds the arguments and
    ``gen_ai.choice`` the result's content blocks (no model call after it
    to say them again)."""
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather"}
    events = [
        ("gen_ai.tool.message", {"role": "tool", "content": '{"city": "Paris"}', "id": "t1"}),
        (
            "gen_ai.choice",
            {"message": orjson.dumps([{"text": '{"temp": 21}'}]).decode(), "id": "t1"},
        ),
    ]
    spans = [
        _span(AGENT, "", "invoke_agent a", 0, {"gen_ai.operation.name": "invoke_agent"}),
        _span(TOOL1, AGENT, "execute_tool weather", 1, tool, events),
    ]
    [turn] = _state(tmp_path, spans)["turns"]
    assert [(t["args"], t["result"]) for t in turn["tool_calls"]] == [
        ({"city": "Paris"}, {"temp": 21})
    ]
