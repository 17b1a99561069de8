"""Values and content blocks as the GenAI producers write them, read into one shape.

A message's content may be a string, JSON text of a list, or a list of
*content blocks* in a provider's shape; each becomes the parts of the GenAI
semantic conventions (``{"type": "text", "content"}``, ``{"type":
"tool_call", "id", "name", "arguments"}``, ``{"type": "tool_call_response",
"id", "name", "response"}``, ``{"type": "reasoning", "content"}``):

- the conventions' own parts, kept as they are;
- OpenAI and Anthropic: ``{"type": "text", "text"}``, ``{"type": "tool_use",
  "id", "name", "input"}``, ``{"type": "tool_result", "tool_use_id",
  "content", "is_error"}``, the Responses API's ``function_call`` and
  ``function_call_output`` items, ``thinking`` / ``reasoning``;
- Bedrock Converse (Strands): ``{"text"}``, ``{"toolUse": {"toolUseId",
  "name", "input"}}``, ``{"toolResult": {"toolUseId", "status", "content":
  [{"text"} | {"json"}]}}``;
- Gemini: ``{"text", "thought"}``, ``functionCall`` / ``function_call``,
  ``functionResponse`` / ``function_response``, snake or camel case.

A tool response that says it failed (Bedrock's ``status: error``,
Anthropic's ``is_error``) carries ``"error": True``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from replay_tui.core import strict_json

#: Values that mean "not captured" (design.md §4.5): recorders write these
#: in place of content they were told not to keep.
PLACEHOLDERS = frozenset(
    {"<elided>", "<REDACTED>", "__REDACTED__", "", "<not specified>", "N/A", "(merged tools)"}
)
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
Part = dict[str, Any]


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.strip() in PLACEHOLDERS


def first(values: Any) -> Any:
    """The first value that is neither None nor a placeholder."""
    return next((v for v in values if v is not None and not is_placeholder(v)), None)


def parse_json(value: Any) -> Any:
    """JSON text -> value; anything else (or text that is not JSON) as it is."""
    if isinstance(value, str):
        text = value.strip()
        if (
            text[:1] in ("{", "[", '"')
            or text in ("null", "true", "false")
            or _NUMBER.fullmatch(text or "x")
        ):
            try:
                return strict_json.loads_written(text.encode())
            except orjson.JSONDecodeError:
                return value
    return value


def text_part(text: Any) -> Part:
    return {"type": "text", "content": text}


#: Keys by which a dict is known as a content block of some provider.
_BLOCK_KEYS = frozenset(
    {
        "type",
        "text",
        "toolUse",
        "toolResult",
        "functionCall",
        "function_call",
        "functionResponse",
        "function_response",
        "json",
    }
)


def _is_blocks(value: Any) -> bool:
    """A non-empty list whose every item is a content block."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(i, dict) and not _BLOCK_KEYS.isdisjoint(i) for i in value)
    )


def block_value(content: Any) -> Any:
    """What a tool result's blocks hold: Bedrock's ``[{"text": "<json>"}]``
    is that JSON's value; several texts are joined; ``{"json": X}`` is X."""
    content = parse_json(content)
    if not isinstance(content, list) or not content:
        return content
    if all(isinstance(b, dict) and set(b) == {"json"} for b in content) and len(content) == 1:
        return content[0]["json"]
    if all(
        isinstance(b, dict) and set(b) <= {"text", "type"} and b.get("type", "text") == "text"
        for b in content
    ) and all("text" in b for b in content):
        return parse_json("".join(str(b["text"]) for b in content))
    return content


def _bedrock(item: dict[str, Any]) -> Part | None:
    use, res = item.get("toolUse"), item.get("toolResult")
    if isinstance(use, dict):
        return {
            "type": "tool_call",
            "id": use.get("toolUseId"),
            "name": use.get("name"),
            "arguments": parse_json(use.get("input")),
        }
    if isinstance(res, dict):
        part: Part = {
            "type": "tool_call_response",
            "id": res.get("toolUseId"),
            "name": None,
            "response": block_value(res.get("content")),
        }
        if res.get("status") == "error":
            part["error"] = True
        return part
    return None


def _typed(item: dict[str, Any]) -> Part | None:
    """A block with a ``type``: OpenAI's, Anthropic's, or the conventions' own part."""
    kind = item["type"]
    if kind == "text":
        return text_part(item["content"] if "content" in item else item.get("text"))
    if kind in ("thinking", "reasoning") and ("thinking" in item or "text" in item):
        return {"type": "reasoning", "content": item.get("thinking", item.get("text"))}
    if kind in ("tool_use", "function_call") and "name" in item:
        return {
            "type": "tool_call",
            "id": item.get("id") if kind == "tool_use" else item.get("call_id", item.get("id")),
            "name": item.get("name"),
            "arguments": parse_json(item.get("input", item.get("arguments"))),
        }
    if kind == "tool_result":
        part: Part = {
            "type": "tool_call_response",
            "id": item.get("tool_use_id"),
            "name": None,
            "response": block_value(item.get("content")),
        }
        if item.get("is_error") is True:
            part["error"] = True
        return part
    if kind == "function_call_output":
        return {
            "type": "tool_call_response",
            "id": item.get("call_id"),
            "name": None,
            "response": parse_json(item.get("output")),
        }
    return dict(item)


def _block(item: Any) -> list[Part]:
    if isinstance(item, str):
        return [text_part(item)]
    if not isinstance(item, dict):
        return []
    if isinstance(item.get("type"), str):
        part = _typed(item)
        return [part] if part is not None else []
    bedrock = _bedrock(item)
    if bedrock is not None:
        return [bedrock]
    if not {"functionCall", "function_call", "functionResponse", "function_response"}.isdisjoint(
        item
    ):
        return google_parts([item])
    if "text" in item:
        kind = "reasoning" if item.get("thought") else "text"
        return [{"type": kind, "content": item["text"]}]
    return []


def content_to_parts(content: Any) -> list[Part]:
    """A message's content (text, JSON text of blocks, blocks) as parts."""
    if content is None or is_placeholder(content):
        return []
    if isinstance(content, str):
        blocks = parse_json(content) if content.lstrip()[:1] == "[" else None
        return content_to_parts(blocks) if _is_blocks(blocks) else [text_part(content)]
    if isinstance(content, dict):
        if isinstance(content.get("parts"), list):
            return google_parts(content["parts"])
        got = _block(content) if not _BLOCK_KEYS.isdisjoint(content) else []
        return got or [text_part(json.dumps(content, sort_keys=True))]
    if isinstance(content, list):
        return [p for item in content for p in _block(item)]
    return [text_part(str(content))]


def google_parts(parts: Any) -> list[Part]:
    """Google Content parts (ADK's llm_request / llm_response), snake or camel case."""
    out: list[Part] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        call = part.get("function_call") or part.get("functionCall")
        resp = part.get("function_response") or part.get("functionResponse")
        if part.get("text") is not None:
            kind = "reasoning" if part.get("thought") else "text"
            out.append({"type": kind, "content": part["text"]})
        elif isinstance(call, dict):
            out.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("args"),
                }
            )
        elif isinstance(resp, dict):
            out.append(
                {
                    "type": "tool_call_response",
                    "id": resp.get("id"),
                    "name": resp.get("name"),
                    "response": resp.get("response"),
                }
            )
    return out
