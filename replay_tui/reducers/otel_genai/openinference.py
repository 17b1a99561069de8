"""OpenInference's conventions (Arize's ``openinference-instrumentation-*``),
read into the facts the GenAI conventions give.

OpenInference writes no ``gen_ai.*`` attribute. A span says what it is by
``openinference.span.kind`` (``LLM``, ``TOOL``, ``AGENT``, ``CHAIN``, ...);
an LLM span's messages are flattened attributes
``llm.{input,output}_messages.N.message.{role,content,name,tool_call_id}``,
``...message.contents.K.message_content.{type,text}`` and
``...message.tool_calls.M.tool_call.{id,function.name,function.arguments}``;
its tokens are ``llm.token_count.{prompt,completion}`` (aliased in
:mod:`.messages`). A TOOL span has ``tool.name``, and its input and output
as ``input.value`` / ``output.value`` (``*.mime_type`` says whether JSON):
LangChain's instrumentation writes there the tool's input as LangChain got
it (a bare string for a one-argument tool: not the arguments object) and
the ToolMessage as JSON (``{"type": "tool", "data": {"content",
"tool_call_id", "status"}}``; ``status: error`` is the only sign of a tool
that failed and was handled). ``__REDACTED__`` (hidden inputs/outputs) is
a placeholder: not captured.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from replay_tui.reducers.otel_genai.blocks import first, is_placeholder, parse_json

KIND = "openinference.span.kind"
#: OpenInference span kind -> the GenAI kind it is (others: "other").
KINDS = {"LLM": "inference", "TOOL": "tool", "AGENT": "agent", "CHAIN": "none"}
_ROW = re.compile(r"llm\.(input|output)_messages\.(\d+)\.message\.(.+)$")
_CALL = re.compile(r"tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)$")
_PART = re.compile(r"contents\.(\d+)\.message_content\.(type|text)$")


def span_kind(attrs: Mapping[str, Any]) -> str | None:
    """The span's OpenInference kind, upper case (None: not an OpenInference span)."""
    value = attrs.get(KIND)
    return value.strip().upper() if isinstance(value, str) and value.strip() else None


def message_rows(attrs: Mapping[str, Any], side: str) -> list[tuple[str, dict[str, Any]]]:
    """``(role, row)`` per message of ``side`` (``input`` / ``output``), the
    row in the shape of OpenLLMetry's indexed attributes (``content``,
    ``tool_call_id``, ``tool_calls.M.{id,name,arguments}``)."""
    rows: dict[int, dict[str, Any]] = {}
    texts: dict[int, dict[int, dict[str, Any]]] = {}
    for key, value in attrs.items():
        found = _ROW.match(key)
        if found is None or found.group(1) != side:
            continue
        n, rest = int(found.group(2)), found.group(3)
        row = rows.setdefault(n, {})
        call = _CALL.match(rest)
        part = _PART.match(rest)
        if call is not None:
            field = call.group(2).removeprefix("function.")
            row[f"tool_calls.{call.group(1)}.{field}"] = value
        elif part is not None:
            texts.setdefault(n, {}).setdefault(int(part.group(1)), {})[part.group(2)] = value
        elif rest in ("role", "content", "tool_call_id", "name"):
            row[rest] = value
    for n, parts in texts.items():
        said = [p.get("text") for _, p in sorted(parts.items()) if p.get("type", "text") == "text"]
        if "content" not in rows[n] and any(isinstance(t, str) for t in said):
            rows[n]["content"] = "".join(t for t in said if isinstance(t, str))
    default = "assistant" if side == "output" else "user"
    return [(str(rows[n].get("role") or default), rows[n]) for n in sorted(rows)]


def has_messages(attrs: Mapping[str, Any]) -> bool:
    return any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in attrs)


def _value(attrs: Mapping[str, Any], key: str) -> Any:
    """``input.value`` / ``output.value``: parsed when its mime type (or its
    look) says JSON; None when it is a placeholder."""
    value = attrs.get(key)
    if value is None or is_placeholder(value):
        return None
    mime = attrs.get(key.replace(".value", ".mime_type"))
    return parse_json(value) if mime in (None, "application/json") else value


def tool_facts(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """A TOOL span's name, call id, arguments, result and whether it says
    it failed, as far as it says them."""
    out: dict[str, Any] = {
        "tool_name": first([attrs.get("tool.name")]),
        "tool_call_id": first([attrs.get("tool_call.id")]),
    }
    args = parse_json(attrs.get("tool_call.function.arguments"))
    if args is None or is_placeholder(args):
        given = _value(attrs, "input.value")
        # only an object is the arguments: LangChain passes a one-argument
        # tool its bare value, which the model's tool call says in full
        args = given if isinstance(given, dict) else None
    out["args"] = args
    result = _value(attrs, "output.value")
    data = result.get("data") if isinstance(result, dict) else None
    if isinstance(result, dict) and result.get("type") == "tool" and isinstance(data, dict):
        out["tool_call_id"] = out["tool_call_id"] or first([data.get("tool_call_id")])
        out["tool_failed"] = data.get("status") == "error"
        result = parse_json(data.get("content"))
    out["result"] = None if is_placeholder(result) else result
    return out


def _plain(attrs: Mapping[str, Any], key: str) -> str | None:
    """``input.value`` / ``output.value`` when it is plain text."""
    value = attrs.get(key)
    mime = attrs.get(key.replace(".value", ".mime_type"))
    if not isinstance(value, str) or is_placeholder(value) or mime == "application/json":
        return None
    return value if mime == "text/plain" or parse_json(value) is value else None


def value_messages(attrs: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """An LLM or AGENT span's messages from ``input.value`` / ``output.value``
    (for a span without the flattened ones): plain text is the user's words
    and the answer; JSON, an OpenAI chat request's ``messages`` and its
    response's ``choices[].message``. Anything else says nothing."""
    inp: list[Any] = []
    out: list[Any] = []
    text_in, text_out = _plain(attrs, "input.value"), _plain(attrs, "output.value")
    if text_in is not None:
        inp = [{"role": "user", "content": text_in}]
    if text_out is not None:
        out = [{"role": "assistant", "content": text_out}]
    request, response = _value(attrs, "input.value"), _value(attrs, "output.value")
    if isinstance(request, dict) and isinstance(request.get("messages"), list):
        inp = [m for m in request["messages"] if isinstance(m, dict) and "role" in m]
    choices = response.get("choices") if isinstance(response, dict) else None
    if isinstance(choices, list):
        out = [
            c["message"]
            for c in choices
            if isinstance(c, dict) and isinstance(c.get("message"), dict)
        ]
    return inp, out
