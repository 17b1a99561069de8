"""Untrusted text made inert for a terminal.

Event and receipt text is data, never markup and never control sequences: an
ESC in a payload must not clear the screen, write the clipboard (OSC 52) or
retitle the window, and a bidi override must not reorder what people read.
Everything shown passes through :func:`escape_controls` first; the UI then
wraps it in ``rich.text.Text`` (never markup).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.words import plural

# C0 controls, DEL, C1 controls; bidi embeddings/overrides/isolates and marks;
# zero-width and line/paragraph separators; BOM/ZWNBSP. All are shown escaped.
UNSAFE_CHARS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}

SECRET_WORDS = ("token", "secret", "password", "passwd", "cookie", "authorization")
MASK = "••••••"


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named:
        return named
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escape_controls(text: str) -> str:
    """``text`` with every control, bidi and invisible character spelled out."""
    return UNSAFE_CHARS.sub(_escape, text)


def clip(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters with a marker saying how much is
    hidden. A cut never makes it longer, nor hides fewer characters than the
    marker costs: then ``text`` is shown whole."""
    if limit <= 0 or len(text) <= limit:
        return text
    hidden = len(text) - limit
    note = f"… (+{plural(hidden, 'char', sep=True)})"
    if len(note) >= hidden:
        return text
    return text[:limit] + note


def is_secret_key(key: str) -> bool:
    """True for keys whose values look like credentials (not e.g. ``tokens``)."""
    k = key.lower().replace("-", "_")
    words = re.split(r"[^a-z0-9]+|_", k)
    if "api_key" in k or "apikey" in k or "private_key" in k:
        return True
    return any(w in SECRET_WORDS for w in words)


def mask_secrets(value: Any, depth: int = 0) -> Any:
    """A copy of a JSON value with secret-looking keys' values masked."""
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {
            k: (
                MASK
                if isinstance(k, str) and is_secret_key(k) and v is not None
                else mask_secrets(v, depth + 1)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(v, depth + 1) for v in value]
    return value


def compact_json(value: Any, limit: int = 0) -> str:
    """One-line JSON of ``value``, escaped and clipped, for summaries."""
    try:
        text = strict_json.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = f"<{type(value).__name__} nested too deeply to show>"
    return clip(escape_controls(text), limit)


def safe_line(raw: bytes, limit: int = 0) -> str:
    """A raw ledger line (maybe not UTF-8) as displayable text."""
    return clip(escape_controls(raw.decode("utf-8", errors="backslashreplace")), limit)
