"""Run text made inert for a report: JSON with bidi, invisible and C1
characters escaped, secrets masked, long blocks cut; a line that is not JSON
masked as well as it can be."""

from __future__ import annotations

import re
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.safe_text import (
    MASK,
    UNSAFE_CHARS,
    clip,
    escape_controls,
    is_secret_key,
    mask_secrets,
)
from replay_tui.state.persistent import json_default, thaw

#: Longest JSON block (an event, a state, a receipt), in characters. A state of
#: a long run can be hundreds of MB: the report is for a ticket, and
#: ``replay-tui state RUN --at N`` prints it whole.
BLOCK_LIMIT = 200_000


def _json_escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch == "\n":  # orjson escapes controls inside strings: a raw newline is layout
        return ch
    code = ord(ch)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_safe(text: str) -> str:
    """JSON text with bidi, invisible and C1 characters written as ``\\uXXXX``
    escapes: still the same JSON, and nothing in it acts on a terminal or
    reorders what people read."""
    return UNSAFE_CHARS.sub(_json_escape, text)


def json_text(value: Any, *, reveal: bool, pretty: bool = True, limit: int = BLOCK_LIMIT) -> str:
    """A JSON value (plain or frozen) for people: secrets masked unless
    ``reveal``, inert, cut at ``limit`` characters."""
    plain = thaw(value)
    shown = plain if reveal else mask_secrets(plain)
    try:
        data = strict_json.dumps(
            shown, option=orjson.OPT_INDENT_2 if pretty else 0, default=json_default
        )
    except TypeError as exc:  # orjson.JSONEncodeError is one
        return f"(not shown: {escape_controls(str(exc))})"
    return clip(json_safe(data.decode()), limit)


_RAW_SECRET = re.compile(r'"((?:[^"\\]|\\.){1,200})"(\s*:\s*)("(?:[^"\\]|\\.)*"?|[^\s,}\]]+)')


def mask_raw(text: str) -> str:
    """A line that is not JSON (it did not parse) with the values of
    secret-looking ``"key": value`` pairs masked: best effort, as the line
    cannot be read as JSON."""

    def repl(match: re.Match[str]) -> str:
        if not is_secret_key(match.group(1)):
            return match.group()
        return f'"{match.group(1)}"{match.group(2)}"{MASK}"'

    return _RAW_SECRET.sub(repl, text)


def inert_raw(raw: str, reveal: bool) -> str:
    return clip(escape_controls(raw if reveal else mask_raw(raw)), BLOCK_LIMIT)


def inert_lines(text: str) -> str:
    """Text of several lines (a traceback): each line made inert, the lines kept."""
    lines = text.rstrip("\n").split("\n")
    return clip("\n".join(escape_controls(line) for line in lines), BLOCK_LIMIT)


def inert_value(value: Any) -> str | None:
    """A string from the run (or the rules) for people, or None."""
    return None if value is None else escape_controls(str(value))
