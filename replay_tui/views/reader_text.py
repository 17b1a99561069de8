"""A recorded result or receipt of any size as rows, drawn a screen at a time.

The receipt pane shows a value cut to a few screens; the result reader (``o``)
shows all of it. A JSON value is laid out as indented ``key: value`` rows; a
string of many lines or many characters (a 12 MB tool output) is shown as its
own lines under a header that says how long it is, never as one escaped
line. Nothing is copied: a row is a (start, end) span of the string it comes
from, found with ``str.find`` a line at a time, so building the rows of 12 MB
leaves the interpreter to other threads between lines, and drawing a row
costs its own length.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural

#: A line longer than this is cut into rows of this many characters (a
#: continuation row starts with ``↪``): a 12 MB line without a newline is
#: still drawn a screen at a time.
ROW_CHARS = 400
#: A string this long, or with a newline, is shown as a block of its lines.
BLOCK_CHARS = 120
_KEY_CHARS = 80  # a key longer than this is cut in its row (the value is not)


@dataclass
class _Block:
    """Rows of one piece of ``text``: ``starts[i]:ends[i]`` for row ``i``."""

    text: str
    indent: int
    style: str  # "json" (a row of the layout) or "text" (a line of a string)
    starts: array[int] = field(default_factory=lambda: array("q"))
    ends: array[int] = field(default_factory=lambda: array("q"))


@dataclass(frozen=True)
class ReaderRow:
    """One row to draw: its indent, its text (escaped, tabs as spaces), and
    whether it is a line of a string, and one continuing the line above."""

    indent: int
    text: str
    style: str
    continued: bool


class Cancelled(Exception):
    """The rows were not wanted any more."""


class ReaderText:
    """The rows of a JSON value; ``len()`` of them, ``row(i)`` one of them."""

    def __init__(self, value: Any, *, cancelled: Callable[[], bool] | None = None) -> None:
        self._blocks: list[_Block] = []
        self._firsts = array("q")  # the row each block starts at
        self._rows = 0
        #: The widest row, in characters, before tabs are expanded.
        self.widest = 0
        #: Lines of the longest string shown as a block (0: none).
        self.longest_lines = 0
        self._cancelled = cancelled or (lambda: False)
        self._value(value, 0, "")

    def __len__(self) -> int:
        return self._rows

    def row(self, index: int) -> ReaderRow:
        at = bisect.bisect_right(self._firsts, index) - 1
        block = self._blocks[at]
        i = index - self._firsts[at]
        start, end = block.starts[i], block.ends[i]
        text = block.text[start:end]
        continued = block.style == "text" and start > 0 and block.text[start - 1] != "\n"
        return ReaderRow(block.indent, escape_controls(text.expandtabs(8)), block.style, continued)

    # -- laying the value out ----------------------------------------------
    def _line(self, indent: int, text: str) -> None:
        block = _Block(text, indent, "json")
        block.starts.append(0)
        block.ends.append(len(text))
        self.widest = max(self.widest, indent + len(text))
        self._add(block)

    def _add(self, block: _Block) -> None:
        self._blocks.append(block)
        self._firsts.append(self._rows)
        self._rows += len(block.starts)

    def _value(self, value: Any, indent: int, lead: str, tail: str = "") -> None:
        if isinstance(value, dict):
            if not value:
                self._line(indent, f"{lead}{{}}{tail}")
                return
            self._line(indent, f"{lead}{{")
            items = list(value.items())
            for n, (key, item) in enumerate(items):
                shown = _json(str(key))
                if len(shown) > _KEY_CHARS:
                    shown = shown[: _KEY_CHARS - 1] + '…"'
                self._value(item, indent + 2, f"{shown}: ", "," if n < len(items) - 1 else "")
            self._line(indent, "}" + tail)
        elif isinstance(value, list):
            if not value:
                self._line(indent, f"{lead}[]{tail}")
                return
            self._line(indent, f"{lead}[")
            for n, item in enumerate(value):
                self._value(item, indent + 2, "", "," if n < len(value) - 1 else "")
            self._line(indent, "]" + tail)
        elif isinstance(value, str) and (len(value) > BLOCK_CHARS or "\n" in value):
            self._string(value, indent, lead, tail)
        else:
            self._line(indent, f"{lead}{_json(value)}{tail}")

    def _string(self, text: str, indent: int, lead: str, tail: str) -> None:
        block = _Block(text, indent + 2, "text")
        starts, ends = block.starts, block.ends
        pos, size, lines, widest = 0, len(text), 0, 0
        while pos <= size:
            if lines % 4096 == 0 and self._cancelled():
                raise Cancelled
            nl = text.find("\n", pos)
            end = size if nl < 0 else nl
            lines += 1
            start = pos
            while end - start > ROW_CHARS:  # a long line: rows of ROW_CHARS
                starts.append(start)
                ends.append(start + ROW_CHARS)
                start += ROW_CHARS
            starts.append(start)
            ends.append(end)
            widest = max(widest, end - start)
            if nl < 0:
                break
            pos = nl + 1
        self.longest_lines = max(self.longest_lines, lines)
        self.widest = max(self.widest, block.indent + widest)
        what = f"{len(text):,} characters in {plural(lines, 'line', sep=True)}"
        self._line(indent, f"{lead}({what}){tail}")
        self._add(block)


def _json(value: Any) -> str:
    try:
        return strict_json.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)
