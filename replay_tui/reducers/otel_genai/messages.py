"""Messages of every GenAI convention, reduced to what the ``otel_genai`` rules read.

Every message source (v2 span attributes, the inference-details event or log,
ADK's ``gcp.vertex.agent.llm_request/llm_response`` JSON, OpenLLMetry's
indexed ``gen_ai.prompt.N.*`` attributes, the legacy per-message events) is
first turned into one shape, ``[{"role", "parts": [...]}]`` with parts
``{"type": "text", "content"}``, ``{"type": "tool_call", "id", "name",
"arguments"}`` and ``{"type": "tool_call_response", "id", "name",
"response"}``, then *summarised* to what deriving turns needs (design.md
§4.5-§4.6), so the store keeps summaries, not whole requests:

- an input summary ``{"user", "text", "responses", "ends_tool"}``: the text of
  the trailing user messages, the text of all of them (only when there is no
  user text), the tool responses it carries and whether it ends with one;
- an output summary ``{"text", "calls"}``: the text and the requested tools.

A message list with no content (placeholders only) has no summary (None).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from replay_tui.formats.otel.load import to_int
from replay_tui.reducers.otel_genai.blocks import PLACEHOLDERS as PLACEHOLDERS
from replay_tui.reducers.otel_genai.blocks import block_value, content_to_parts, google_parts
from replay_tui.reducers.otel_genai.blocks import first as first
from replay_tui.reducers.otel_genai.blocks import is_placeholder as is_placeholder
from replay_tui.reducers.otel_genai.blocks import parse_json as parse_json
from replay_tui.reducers.otel_genai.openinference import (
    has_messages,
    message_rows,
    span_kind,
    value_messages,
)

Msg = dict[str, Any]
Summary = dict[str, Any]

#: The event (or log) of the newer convention that carries one model call's messages.
DETAILS = "gen_ai.client.inference.operation.details"
#: Legacy per-message events (OpenAI v2 contrib, older semconv) -> the role of their message.
LEGACY_INPUT = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
LEGACY = frozenset({*LEGACY_INPUT, "gen_ai.choice"})
#: Deprecated attribute name -> current name (copied only when the current is absent).
ALIASES = {
    "gen_ai.system": "gen_ai.provider.name",
    "gen_ai.usage.prompt_tokens": "gen_ai.usage.input_tokens",
    "gen_ai.usage.completion_tokens": "gen_ai.usage.output_tokens",
    "llm.usage.prompt_tokens": "gen_ai.usage.input_tokens",
    "llm.usage.completion_tokens": "gen_ai.usage.output_tokens",
    "llm.token_count.prompt": "gen_ai.usage.input_tokens",  # OpenInference
    "llm.token_count.completion": "gen_ai.usage.output_tokens",
    # cache tokens: OpenLLMetry's names, then OpenInference's
    "gen_ai.usage.cache_read_input_tokens": "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens": "gen_ai.usage.cache_creation.input_tokens",
    "llm.token_count.prompt_details.cache_read": "gen_ai.usage.cache_read.input_tokens",
    "llm.token_count.prompt_details.cache_write": "gen_ai.usage.cache_creation.input_tokens",
}
#: Where a call's cache counts are, by their current names.
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE = "gen_ai.usage.cache_creation.input_tokens"
#: ``gen_ai.system`` values that name a framework, not a provider.
FRAMEWORK_SYSTEMS = frozenset({"gcp.vertex.agent"})
_TOOL_CALL_KEY = re.compile(r"tool_calls\.(\d+)\.(\w+)$")


def unwrap_result(value: Any) -> Any:
    """ADK wraps a result that is not an object as ``{"result": X}``,
    Bedrock (Strands) as text blocks ``[{"text": "<json>"}]``; placeholders
    mean "not captured"."""
    value = parse_json(value)
    if isinstance(value, dict) and set(value) == {"result"}:
        value = value["result"]
    elif isinstance(value, list) and all(isinstance(b, dict) and set(b) == {"text"} for b in value):
        value = block_value(value)
    return None if is_placeholder(value) else value


def overlay(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes with deprecated names copied to their current names."""
    out = dict(attrs)
    for old, new in ALIASES.items():
        if old in attrs and new not in out:
            value = attrs[old]
            if old == "gen_ai.system" and value in FRAMEWORK_SYSTEMS:
                continue
            out[new] = value
    return out


def usage_of(attrs: Mapping[str, Any]) -> list[int] | None:
    """``[input, output, cache read, cache write]`` tokens from (overlaid)
    attributes (:func:`usage`), or None when they say none."""
    keys = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", CACHE_READ, CACHE_WRITE)
    said = [attrs.get(k) for k in keys]
    if all(v is None for v in said):
        return None
    return usage(*(max(0, to_int(v)) for v in said))


def usage(inp: int, out: int, read: int, write: int) -> list[int]:
    """A call's ``[input, output, cache read, cache write]``, the input
    holding the tokens read from and written to a cache, as the GenAI
    conventions, OpenInference and OpenLLMetry count them (and OpenAI's and
    Gemini's APIs). An input smaller than its cache counts cannot hold
    them: it was said apart, as Anthropic's API says it, and they are added."""
    if read + write > inp:
        inp += read + write
    return [inp, out, read, write]


def adk_usage(attrs: Mapping[str, Any]) -> list[int] | None:
    """ADK's ``llm_response.usage_metadata`` token counts, or None."""
    resp = parse_json(attrs.get("gcp.vertex.agent.llm_response"))
    meta = resp.get("usage_metadata") if isinstance(resp, dict) else None
    if isinstance(meta, dict) and (
        "prompt_token_count" in meta or "candidates_token_count" in meta
    ):
        return usage(
            max(0, to_int(meta.get("prompt_token_count"))),
            max(0, to_int(meta.get("candidates_token_count"))),
            max(0, to_int(meta.get("cached_content_token_count"))),
            0,
        )
    return None


# -- one shape for every convention -------------------------------------------------


def openai_tool_calls(calls: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
        if isinstance(fn.get("name"), str):
            out.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": fn["name"],
                    "arguments": parse_json(fn.get("arguments")),
                }
            )
    return out


def google_message(content: Any) -> Msg | None:
    if not isinstance(content, dict):
        return None
    parts = google_parts(content.get("parts"))
    role = content.get("role") or "user"
    role = "assistant" if role == "model" else role
    if parts and all(p["type"] == "tool_call_response" for p in parts):
        role = "tool"
    return {"role": role, "parts": parts}


def normalize_message(raw: Any) -> Msg | None:
    if not isinstance(raw, dict):
        return None
    role = raw.get("role") if isinstance(raw.get("role"), str) and raw.get("role") else "user"
    parts = raw.get("parts")
    if not isinstance(parts, list):
        parts = content_to_parts(raw.get("content")) + openai_tool_calls(raw.get("tool_calls"))
    parts = [dict(p) for p in parts if isinstance(p, dict)]
    for part in parts:  # arguments and responses may be JSON text
        if part.get("type") == "tool_call":
            part["arguments"] = parse_json(part.get("arguments"))
        if part.get("type") == "tool_call_response":
            part["response"] = parse_json(part.get("response", part.get("result")))
    return {"role": "assistant" if role == "model" else role, "parts": parts}


def parse_messages(value: Any) -> list[Msg]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages``: a list, JSON
    text of one, or one message; [] when it holds no content."""
    if value is None or is_placeholder(value):
        return []
    data = parse_json(value) if isinstance(value, str) else value
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return []
    msgs = [m for m in (normalize_message(x) for x in data) if m]
    return msgs if has_content(msgs) else []


def has_content(msgs: Iterable[Msg] | None) -> bool:
    for msg in msgs or []:
        for part in msg.get("parts", []):
            if part.get("type") == "text":
                content = part.get("content")
                if content not in (None, "") and not is_placeholder(content):
                    return True
            elif part.get("type"):
                return True
    return False


def text_of(msgs: Iterable[Msg] | None) -> str | None:
    """Text parts (not reasoning) joined with "" (design.md §10.1)."""
    chunks: list[str] = []
    for msg in msgs or []:
        for part in msg.get("parts", []):
            if part.get("type") == "text" and not is_placeholder(part.get("content")):
                content = part.get("content")
                if not isinstance(content, str):
                    content = json.dumps(content, sort_keys=True) if content is not None else None
                if content:
                    chunks.append(content)
    return "".join(chunks) or None


def _id(value: Any) -> str | None:
    """A part's call id as text (None when it has none)."""
    if not value:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def tool_calls_of(msgs: Iterable[Msg] | None) -> list[dict[str, Any]]:
    return [
        {"id": _id(p.get("id")), "name": p["name"], "arguments": parse_json(p.get("arguments"))}
        for m in msgs or []
        for p in m.get("parts", [])
        if p.get("type") == "tool_call" and isinstance(p.get("name"), str) and p.get("name")
    ]


def tool_responses_of(msgs: Iterable[Msg] | None) -> list[dict[str, Any]]:
    return [
        {
            "id": _id(p.get("id")),
            "name": p.get("name"),
            "response": parse_json(p.get("response")),
            **({"error": True} if p.get("error") is True else {}),
        }
        for m in msgs or []
        for p in m.get("parts", [])
        if p.get("type") == "tool_call_response"
    ]


def user_turn_messages(msgs: list[Msg]) -> list[Msg]:
    """The trailing run of user messages that carry text (tool responses do not count)."""
    out: list[Msg] = []
    for msg in reversed(msgs):
        if msg.get("role") == "user" and text_of([msg]):
            out.append(msg)
        elif out:
            break
    return list(reversed(out))


# -- summaries: what deriving turns reads of a message list --------------------------
def summarize_in(msgs: list[Msg]) -> Summary | None:
    """An input's user text, all text, tool responses and whether it ends
    with a tool's answer, and whether any words were captured; None when it
    has no content."""
    if not has_content(msgs):
        return None
    last = msgs[-1]
    ends_tool = last.get("role") == "tool" or all(
        p.get("type") == "tool_call_response" for p in last.get("parts", [])
    )
    user = text_of(user_turn_messages(msgs))
    text = text_of(msgs) if user is None else None  # read only when there is no user text
    responses = tool_responses_of(msgs)
    return {
        "user": user,
        "text": text,
        "responses": responses,
        "ends_tool": ends_tool,
        "captured": bool(user or text or any(r["response"] is not None for r in responses)),
    }


def summarize_out(msgs: list[Msg]) -> Summary | None:
    """An output's text and the tools it requests, and whether any words
    were captured; None when it has no content."""
    if not has_content(msgs):
        return None
    text, calls = text_of(msgs), tool_calls_of(msgs)
    captured = bool(text or any(c["arguments"] is not None for c in calls))
    return {"text": text, "calls": calls, "captured": captured}


#: What recorders write for arguments or results when content is off.
NOT_CAPTURED: tuple[Any, ...] = (None, {}, [], "", "{}", "[]")


def _uncaptured(msgs: list[Msg]) -> list[Msg]:
    """Messages of a call whose content was not captured: the ``{}`` some
    recorders write for arguments and results then means "not captured"
    (null), not "no arguments"."""
    out: list[Msg] = []
    for msg in msgs:
        parts = []
        for part in msg.get("parts", []):
            part = dict(part)
            for key in ("arguments", "response"):
                if key in part and (part[key] in NOT_CAPTURED or is_placeholder(part[key])):
                    part[key] = None
            parts.append(part)
        out.append({**msg, "parts": parts})
    return out


def _dropped(msgs: list[Msg]) -> bool:
    """A message with no part, or a text part with no text: content left out."""
    return any(
        not msg.get("parts")
        or any(p.get("type") == "text" and not p.get("content") for p in msg["parts"])
        for msg in msgs
    )


def pair(inp: list[Msg], out: list[Msg]) -> list[Summary | None] | None:
    """``[input summary, output summary]``, or None when both are empty.
    When neither says a word and words were dropped (a text part or a
    message left empty), empty arguments and results are not captured."""
    if text_of(inp) is None and text_of(out) is None and _dropped([*inp, *out]):
        inp, out = _uncaptured(inp), _uncaptured(out)
    got = [summarize_in(inp), summarize_out(out)]
    return got if got != [None, None] else None


# -- the sources, per convention -----------------------------------------------------
def _adk_pair(attrs: Mapping[str, Any]) -> list[Summary | None] | None:
    req = parse_json(attrs.get("gcp.vertex.agent.llm_request"))
    resp = parse_json(attrs.get("gcp.vertex.agent.llm_response"))
    contents = (req.get("contents") or []) if isinstance(req, dict) else []
    adk_in = [m for m in (google_message(c) for c in contents) if m]
    adk_out = (
        [m for m in [google_message(resp.get("content"))] if m] if isinstance(resp, dict) else []
    )
    return pair(adk_in, adk_out)


def _indexed_row(role: str, row: dict[str, Any]) -> Msg:
    parts: list[dict[str, Any]] = []
    content = row.get("content")
    if content is not None:
        if role == "tool":
            parts.append(
                {
                    "type": "tool_call_response",
                    "id": row.get("tool_call_id"),
                    "name": row.get("name"),
                    "response": parse_json(content),
                }
            )
        else:
            text = parse_json(content) if str(content).lstrip()[:1] == "[" else content
            parts += content_to_parts(text)
    calls: dict[int, dict[str, Any]] = {}
    for key, value in row.items():
        found = _TOOL_CALL_KEY.match(key)
        if found:
            calls.setdefault(int(found.group(1)), {})[found.group(2)] = value
    for j in sorted(calls):
        call = calls[j]
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "arguments": parse_json(call.get("arguments")),
            }
        )
    return {"role": role, "parts": parts}


def indexed_messages(attrs: Mapping[str, Any], prefix: str) -> list[Msg]:
    """OpenLLMetry: ``gen_ai.prompt.N.role/content/tool_calls.M.*/tool_call_id``."""
    pattern = re.compile(re.escape(prefix) + r"\.(\d+)\.(.+)$")
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        found = pattern.match(key)
        if found:
            rows.setdefault(int(found.group(1)), {})[found.group(2)] = value
    msgs: list[Msg] = []
    for i in sorted(rows):
        row = rows[i]
        role = row.get("role") or ("assistant" if prefix.endswith("completion") else "user")
        msgs.append(_indexed_row(str(role), row))
    return msgs if has_content(msgs) else []


def attr_sources(attrs: Mapping[str, Any]) -> dict[str, list[Summary | None]]:
    """The message sources a span's own attributes hold: ``v2``
    (``gen_ai.input/output.messages``), ``adk`` (ADK JSON), ``indexed``
    (OpenLLMetry), ``oi`` (OpenInference); each ``[input summary, output
    summary]``, absent if empty."""
    out: dict[str, list[Summary | None]] = {}
    v2 = pair(
        parse_messages(attrs.get("gen_ai.input.messages")),
        parse_messages(attrs.get("gen_ai.output.messages")),
    )
    if v2 is not None:
        out["v2"] = v2
    adk = _adk_pair(attrs)
    if adk is not None:
        out["adk"] = adk
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attrs):
        indexed = pair(
            indexed_messages(attrs, "gen_ai.prompt"), indexed_messages(attrs, "gen_ai.completion")
        )
        if indexed is not None:
            out["indexed"] = indexed
    if has_messages(attrs):
        oi = pair(
            [_indexed_row(role, row) for role, row in message_rows(attrs, "input")],
            [_indexed_row(role, row) for role, row in message_rows(attrs, "output")],
        )
        if oi is not None:
            out["oi"] = oi
    elif span_kind(attrs) in ("LLM", "AGENT"):
        raw_in, raw_out = value_messages(attrs)
        oi = pair(
            [m for m in map(normalize_message, raw_in) if m],
            [m for m in map(normalize_message, raw_out) if m],
        )
        if oi is not None:
            out["oi"] = oi
    return out


def details_fact(attrs: Mapping[str, Any], body: Any = None) -> dict[str, Any]:
    """An inference-details event or log: its messages and usage."""
    source = {**body, **attrs} if isinstance(body, dict) else attrs
    return {
        "pair": pair(
            parse_messages(source.get("gen_ai.input.messages")),
            parse_messages(source.get("gen_ai.output.messages")),
        ),
        "usage": usage_of(overlay(attrs)),
    }


def legacy_message(name: str, body: Any) -> tuple[str, Msg | None]:
    """``("input" | "output", message)`` from one legacy event's body. A
    choice's ``message`` is an object, content blocks as JSON text (Strands)
    or plain text; its ``tool_calls`` may sit beside it (OpenLLMetry)."""
    body = body if isinstance(body, dict) else ({"content": body} if body is not None else {})
    if name == "gen_ai.choice":
        raw = body.get("message")
        msg = raw if isinstance(raw, dict) else ({"content": raw} if raw is not None else body)
        calls = msg.get("tool_calls") or (body.get("tool_calls") if msg is not body else None)
        parts = content_to_parts(msg.get("content")) + openai_tool_calls(calls)
        return "output", {"role": "assistant", "parts": parts}
    role = LEGACY_INPUT[name]
    if role == "tool":
        resp = body.get("content")
        if resp is None or is_placeholder(resp):
            return "input", {"role": "tool", "parts": []}
        blocks = content_to_parts(resp) if not isinstance(resp, str) or resp[:1] == "[" else []
        if blocks and all(p["type"] == "tool_call_response" for p in blocks):
            return "input", {"role": "tool", "parts": blocks}  # Bedrock's toolResult blocks
        part = {
            "type": "tool_call_response",
            "id": body.get("id"),
            "name": None,
            "response": parse_json(resp),
        }
        return "input", {"role": "tool", "parts": [part]}
    parts = content_to_parts(body.get("content")) + openai_tool_calls(body.get("tool_calls"))
    return "input", {"role": body.get("role") or role, "parts": parts}
