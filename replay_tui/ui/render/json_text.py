"""JSON values as highlighted, inert ``rich.text.Text``.

Our own small renderer rather than ``Syntax``: it knows the path of every
line (so changed paths can be marked), masks secret-looking keys, cuts long
strings with a marker, stops at a line budget and never recurses deeper than
it can show. Every string passes through :func:`escape_controls`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import orjson
from rich.text import Text

from replay_tui.core import strict_json
from replay_tui.core.safe_text import MASK, clip, escape_controls, is_secret_key
from replay_tui.state.diff import Path

KEY = "bold #8fb8ff"
STRING = "#a6d189"
NUMBER = "#ef9f76"
LITERAL = "italic #e5c890"
PUNCT = "#949cbb"
MARK = "bold #f4b860"
MASKED = "reverse #e78284"
MAX_DEPTH = 48


class _Out:
    def __init__(self, max_lines: int) -> None:
        self.lines: list[Text] = []
        self.max_lines = max_lines
        self.dropped = 0

    def add(self, line: Text) -> None:
        if len(self.lines) < self.max_lines:
            self.lines.append(line)
        else:
            self.dropped += 1


#: What a value cut to fit says of itself (see :func:`was_cut`).
_CUT_STRING = "chars, x expands)"
_CUT_LINES = "more lines not shown"


def was_cut(shown: Text) -> bool:
    """Whether :func:`json_text` left out part of the value it drew."""
    plain = shown.plain
    return _CUT_STRING in plain or _CUT_LINES in plain


def scalar_text(value: Any, limit: int) -> Text:
    """One JSON scalar (or a compact container), styled and made safe."""
    if isinstance(value, str):
        hidden = len(value) - limit if 0 < limit < len(value) else 0
        body = escape_controls(strict_json.dumps(value[: len(value) - hidden]).decode())
        text = Text(clip(body, limit), style=STRING)
        if hidden:  # cut before escaping: a 10 MB string costs what is shown
            text.append(f"… (+{hidden:,} {_CUT_STRING}", style="italic dim")
        return text
    if value is None or isinstance(value, bool):
        return Text(strict_json.dumps(value).decode(), style=LITERAL)
    if isinstance(value, (int, float)):
        return Text(strict_json.dumps(value).decode(), style=NUMBER)
    try:
        body = strict_json.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        body = f"<{type(value).__name__}>"
    return Text(clip(escape_controls(body), limit), style=PUNCT)


def json_text(
    value: Any,
    *,
    marked: Collection[Path] = (),
    reveal: bool = False,
    limit: int = 200,
    max_lines: int = 2000,
) -> Text:
    """Indented JSON of ``value``; lines whose path is in ``marked`` get a ``●``."""
    out = _Out(max_lines)
    marks = set(marked)
    prefixes = {p[:i] for p in marks for i in range(len(p))}
    _emit(out, value, (), 0, None, True, marks, prefixes, reveal, limit)
    if out.dropped:
        out.lines.append(Text(f"… {out.dropped:,} {_CUT_LINES}", style="italic dim"))
    return Text("\n").join(out.lines)


def _gutter(path: Path, marks: set[Path], prefixes: set[Path]) -> Text:
    if path in marks:
        return Text("● ", style=MARK)
    if path in prefixes:
        return Text("· ", style=MARK)
    return Text("  ")


def _emit(
    out: _Out,
    value: Any,
    path: Path,
    depth: int,
    key: str | int | None,
    last: bool,
    marks: set[Path],
    prefixes: set[Path],
    reveal: bool,
    limit: int,
) -> None:
    if out.dropped:
        out.dropped += 1
        return
    indent = "  " * depth
    head = Text.assemble(_gutter(path, marks, prefixes), indent)
    if isinstance(key, str):
        head.append(escape_controls(strict_json.dumps(clip(key, limit)).decode()), style=KEY)
        head.append(": ", style=PUNCT)
    comma = Text("" if last else ",", style=PUNCT)
    is_container = isinstance(value, (dict, list))
    if isinstance(key, str) and is_secret_key(key) and value is not None and not reveal:
        out.add(Text.assemble(head, Text(MASK, style=MASKED), comma))
        return
    if not is_container or not value:
        if is_container:
            out.add(
                Text.assemble(
                    head, Text("{}" if isinstance(value, dict) else "[]", style=PUNCT), comma
                )
            )
        else:
            out.add(Text.assemble(head, scalar_text(value, limit), comma))
        return
    if depth >= MAX_DEPTH:
        out.add(
            Text.assemble(
                head,
                Text("{…}" if isinstance(value, dict) else "[…]", style=PUNCT),
                Text(" nested too deep to show", style="italic dim"),
                comma,
            )
        )
        return
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    out.add(Text.assemble(head, Text(opening, style=PUNCT)))
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    for i, (k, v) in enumerate(items):
        _emit(
            out,
            v,
            (*path, k),
            depth + 1,
            k if isinstance(value, dict) else None,
            i == len(items) - 1,
            marks,
            prefixes,
            reveal,
            limit,
        )
    out.add(Text.assemble(Text("  "), indent, Text(closing, style=PUNCT), comma))
