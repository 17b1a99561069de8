"""Paths into a state: how they are written, read and looked up.

A path names a place in the state from its root: keys joined by dots
(``calls.call-003.status``), ``[n]`` for a list item (``checks[0].passed``),
double quotes (JSON string syntax) for a key with dots, spaces or quotes
(``calls."a.b".status``). A key of digits alone read on a list is that
index (``checks.0`` is ``checks[0]``). Every command prints paths this way
(:func:`format_path`) and reads them back (:func:`parse_path`), so what one
prints another reads. Conditions over paths live in
:mod:`replay_tui.questions.condition`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from replay_tui.core.safe_text import UNSAFE_CHARS


class _Missing:
    """Marks the old side of an added path or the new side of a removed one."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
Path = tuple[str | int, ...]


StatePath = tuple[str | int, ...]


#: The value at a path that leads nowhere (not JSON ``null``): the same
#: marker as a change's missing side (:data:`MISSING`), so a patch's old or
#: new value needs no translation.
ABSENT: Any = MISSING


class PathError(ValueError):
    """A path or condition that does not parse: where (1-based column) and why."""

    def __init__(self, text: str, column: int, message: str) -> None:
        super().__init__(f"column {column}: {message}")
        self.text = text
        self.column = column
        self.message = message

    def one_line(self, what: str = "condition") -> str:
        """``bad condition at column 9: expected ...: phase == retrying``."""
        return f"bad {what} at column {self.column}: {self.message}: {self.text}"


BARE = re.compile(r"[A-Za-z0-9_-]+")
_INDEX = re.compile(r"\[(\d+)\]")
KEYWORDS = frozenset({"and", "or", "not", "exists"})


# -- paths ---------------------------------------------------------------------

#: Digits a key may have and still be read as a list index (past any real list).
_MAX_INDEX_DIGITS = 18


def key_index(key: str) -> int | None:
    """The list index a key of ASCII digits alone stands for on a list
    (``"0"``: 0), else None: ``checks.0`` reads ``checks[0]`` of a list and
    the key ``"0"`` of an object."""
    if 0 < len(key) <= _MAX_INDEX_DIGITS and key.isascii() and key.isdigit():
        return int(key)
    return None


def _read_key(text: str, i: int) -> tuple[str, int]:
    """A bare or quoted key at ``i``: (key, index after it)."""
    if i < len(text) and text[i] == '"':
        try:
            key, end = json.JSONDecoder().raw_decode(text, i)
        except json.JSONDecodeError:
            raise PathError(text, i + 1, "unterminated quoted key") from None
        return key, end
    m = BARE.match(text, i)
    if m is None:
        found = repr(text[i]) if i < len(text) else "the end"
        raise PathError(
            text,
            i + 1,
            f"expected a key (letters, digits, _ and -, or a quoted key) but found {found}",
        )
    return m.group(), m.end()


def read_path(text: str, i: int) -> tuple[StatePath, int]:
    """A path starting at ``i``: (path, index after it)."""
    parts: list[str | int] = []
    key, i = _read_key(text, i)
    parts.append(key)
    while i < len(text):
        if text[i] == "[":
            m = _INDEX.match(text, i)
            if m is None:
                raise PathError(text, i + 1, "expected a list index such as [0]")
            parts.append(int(m.group(1)))
            i = m.end()
        elif text[i] == ".":
            key, i = _read_key(text, i + 1)
            parts.append(key)
        else:
            break
    return tuple(parts), i


def parse_path(text: str) -> StatePath:
    """``calls."a.b".status`` as ``("calls", "a.b", "status")``."""
    stripped = text.strip()
    offset = len(text) - len(text.lstrip())
    if not stripped:
        raise PathError(text, 1, "expected a path such as calls.call-003.status")
    path, end = read_path(text, offset)
    if end < len(text.rstrip()):
        raise PathError(text, end + 1, f"unexpected {text[end]!r} after the path")
    return path


def _quoted(key: str) -> str:
    """A key as a JSON string: readable (``"café"``), but every control,
    bidi or invisible character escaped (``"\\u202e"``), so it cannot act on
    a terminal and reads back the same."""
    return UNSAFE_CHARS.sub(
        lambda m: json.dumps(m.group())[1:-1], json.dumps(key, ensure_ascii=False)
    )


def format_path(path: StatePath) -> str:
    """A path as it is typed: bare keys where they can be, else quoted."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
            continue
        word = part if BARE.fullmatch(part) and part not in KEYWORDS else _quoted(part)
        out.append(word if not out else "." + word)
    return "".join(out)


def lookup(state: Any, path: StatePath) -> Any:
    """The value at ``path`` in ``state``, or :data:`ABSENT`. A key reads an
    object, an index only a list: ``x[0]`` of an object is absent. A key of
    digits alone reads a list too, as that index (see :func:`key_index`)."""
    node = state
    kinds = _KINDS
    for part in path:
        kind = kinds.get(type(node))
        if kind is None:
            kind = _kind_of(node)
        if kind is _OBJECT:
            if not isinstance(part, str):
                return ABSENT
            try:
                node = node[part]
            except KeyError:
                return ABSENT
        elif kind is _LIST:
            index = key_index(part) if isinstance(part, str) else part
            if index is None or index >= len(node):
                return ABSENT
            node = node[index]
        else:
            return ABSENT
    return node


_OBJECT, _LIST, _NEITHER = "object", "list", "neither"
#: Each type's kind, as first told (an abstract base's members are a type's, not
#: an instance's): a draft's or a frozen state's read without asking the ABCs again.
_KINDS: dict[type, str] = {dict: _OBJECT, list: _LIST, str: _NEITHER}


def _kind_of(node: Any) -> str:
    if isinstance(node, str | bytes):
        kind = _NEITHER
    elif isinstance(node, Mapping):
        kind = _OBJECT
    elif isinstance(node, Sequence):
        kind = _LIST
    else:
        kind = _NEITHER
    _KINDS[type(node)] = kind
    return kind
