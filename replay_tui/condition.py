"""State paths and conditions over a state: the questions ``when``, ``history``
and the app's ``:`` ask across time.

A *path* names a place in the state from its root: keys joined by dots
(``calls.call-003.status``), ``[n]`` for a list item (``checks[0].passed``),
double quotes (JSON string syntax) for a key with dots, spaces or quotes
(``calls."a.b".status``). Bare keys hold letters, digits, ``_`` and ``-``.
A key of digits alone read on a list is that index (``checks.0`` is
``checks[0]``, the way ``diff`` used to write it); on an object it is a key.

A *condition* is ``PATH OP VALUE`` (``==`` ``!=`` ``<`` ``<=`` ``>`` ``>=``,
VALUE a JSON literal), ``PATH exists``, ``len(PATH)`` in place of a path,
combined with ``and``, ``or``, ``not`` and parentheses. A small recursive
descent parser of its own reads it: never ``eval``. Equality is JSON's
(``true`` is not ``1``; ``1`` is ``1.0``); an absent path makes every
comparison false (absent is not ``null``: ask ``exists``).
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay_tui.diff import MISSING
from replay_tui.safe_text import _UNSAFE

StatePath = tuple[str | int, ...]


#: The value at a path that leads nowhere (not JSON ``null``): the same
#: marker as a change's missing side (:data:`replay_tui.diff.MISSING`), so a
#: patch's old or new value needs no translation.
ABSENT: Any = MISSING


class ConditionError(ValueError):
    """A path or condition that does not parse: where (1-based column) and why."""

    def __init__(self, text: str, column: int, message: str) -> None:
        super().__init__(f"column {column}: {message}")
        self.text = text
        self.column = column
        self.message = message

    def one_line(self, what: str = "condition") -> str:
        """``bad condition at column 9: expected ...: phase == retrying``."""
        return f"bad {what} at column {self.column}: {self.message}: {self.text}"


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_INDEX = re.compile(r"\[(\d+)\]")
_KEYWORDS = frozenset({"and", "or", "not", "exists"})


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
            raise ConditionError(text, i + 1, "unterminated quoted key") from None
        return key, end
    m = _BARE.match(text, i)
    if m is None:
        found = repr(text[i]) if i < len(text) else "the end"
        raise ConditionError(
            text,
            i + 1,
            f"expected a key (letters, digits, _ and -, or a quoted key) but found {found}",
        )
    return m.group(), m.end()


def _read_path(text: str, i: int) -> tuple[StatePath, int]:
    """A path starting at ``i``: (path, index after it)."""
    parts: list[str | int] = []
    key, i = _read_key(text, i)
    parts.append(key)
    while i < len(text):
        if text[i] == "[":
            m = _INDEX.match(text, i)
            if m is None:
                raise ConditionError(text, i + 1, "expected a list index such as [0]")
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
        raise ConditionError(text, 1, "expected a path such as calls.call-003.status")
    path, end = _read_path(text, offset)
    if end < len(text.rstrip()):
        raise ConditionError(text, end + 1, f"unexpected {text[end]!r} after the path")
    return path


def _quoted(key: str) -> str:
    """A key as a JSON string: readable (``"café"``), but every control,
    bidi or invisible character escaped (``"\\u202e"``), so it cannot act on
    a terminal and reads back the same."""
    return _UNSAFE.sub(lambda m: json.dumps(m.group())[1:-1], json.dumps(key, ensure_ascii=False))


def format_path(path: StatePath) -> str:
    """A path as it is typed: bare keys where they can be, else quoted."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
            continue
        word = part if _BARE.fullmatch(part) and part not in _KEYWORDS else _quoted(part)
        out.append(word if not out else "." + word)
    return "".join(out)


def lookup(state: Any, path: StatePath) -> Any:
    """The value at ``path`` in ``state``, or :data:`ABSENT`. A key reads an
    object, an index only a list: ``x[0]`` of an object is absent. A key of
    digits alone reads a list too, as that index (see :func:`key_index`)."""
    node = state
    for part in path:
        if isinstance(part, str):
            if type(node) is dict or (
                isinstance(node, Mapping) and not isinstance(node, (str, bytes))
            ):
                node = node.get(part, ABSENT)
                if node is ABSENT:
                    return ABSENT
            elif type(node) is list or (
                isinstance(node, Sequence) and not isinstance(node, (str, bytes))
            ):
                index = key_index(part)
                if index is None or index >= len(node):
                    return ABSENT
                node = node[index]
            else:
                return ABSENT
        else:
            if type(node) is list or (
                isinstance(node, Sequence) and not isinstance(node, (str, bytes))
            ):
                if part >= len(node):
                    return ABSENT
                node = node[part]
            else:
                return ABSENT
    return node


# -- JSON values -----------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON has it: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if _is_number(a):
        return _is_number(b) and a == b
    if isinstance(a, (bool, str)) or a is None:
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping):
        return (
            isinstance(b, Mapping)
            and len(a) == len(b)
            and all(k in b and json_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, Sequence):
        return (
            isinstance(b, Sequence)
            and not isinstance(b, (str, bytes))
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(a == b)


def _tester(op: str, value: Any) -> Callable[[Any], bool]:
    """``got OP value`` as one function, with the common cases (a number or
    a string against a value present) made cheap."""
    if op in ("==", "!="):
        want = op == "=="
        if isinstance(value, str) or value is None or isinstance(value, bool):
            kind = type(value)
            return lambda got: (type(got) is kind and got == value) is want
        return lambda got: json_equal(got, value) is want
    compare = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]
    if _is_number(value):
        return lambda got: type(got) in (int, float) and compare(got, value)
    if isinstance(value, str):
        return lambda got: type(got) is str and compare(got, value)
    return lambda got: False  # nothing orders against true, null, an object or a list


def _length(value: Any) -> Any:
    """``len(PATH)``: items of a list or object, characters of a string."""
    if value is ABSENT or value is None or isinstance(value, (bool, int, float)):
        return ABSENT
    try:
        return len(value)
    except TypeError:
        return ABSENT


# -- conditions ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compare:
    path: StatePath
    length: bool  # len(PATH)
    op: str
    value: Any
    #: The comparison made once (a scan asks it at every change of the path).
    test: Callable[[Any], bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "test", _tester(self.op, self.value))

    def holds(self, values: Mapping[StatePath, Any]) -> bool:
        got = values.get(self.path, ABSENT)
        if self.length:
            got = _length(got)
        if got is ABSENT:
            return False
        return self.test(got)

    def text(self) -> str:
        left = f"len({format_path(self.path)})" if self.length else format_path(self.path)
        return f"{left} {self.op} {json.dumps(self.value, ensure_ascii=False)}"


@dataclass(frozen=True, slots=True)
class Exists:
    path: StatePath

    def holds(self, values: Mapping[StatePath, Any]) -> bool:
        return values.get(self.path, ABSENT) is not ABSENT

    def text(self) -> str:
        return f"{format_path(self.path)} exists"


@dataclass(frozen=True, slots=True)
class Not:
    inner: Node

    def holds(self, values: Mapping[StatePath, Any]) -> bool:
        return not self.inner.holds(values)

    def text(self) -> str:
        return f"not {_wrapped(self.inner)}"


@dataclass(frozen=True, slots=True)
class BoolOp:
    op: str  # "and" | "or"
    items: tuple[Node, ...]

    def holds(self, values: Mapping[StatePath, Any]) -> bool:
        if self.op == "and":
            return all(item.holds(values) for item in self.items)
        return any(item.holds(values) for item in self.items)

    def text(self) -> str:
        return f" {self.op} ".join(_wrapped(item, self.op) for item in self.items)


Node = Compare | Exists | Not | BoolOp


def _wrapped(node: Node, parent: str = "not") -> str:
    if isinstance(node, BoolOp) and (parent == "not" or node.op != parent):
        return f"({node.text()})"
    return node.text()


_OPS = ("==", "!=", "<=", ">=", "<", ">")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.paths: list[StatePath] = []

    def fail(self, message: str, at: int | None = None) -> ConditionError:
        return ConditionError(self.text, (self.i if at is None else at) + 1, message)

    def skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1

    def word(self) -> str | None:
        """The keyword at the cursor (not consumed), if one stands there alone."""
        self.skip()
        m = _BARE.match(self.text, self.i)
        if m is None or m.group() not in _KEYWORDS:
            return None
        after = self.text[m.end() : m.end() + 1]
        return None if after in (".", "[") else m.group()

    def take(self, keyword: str) -> bool:
        if self.word() == keyword:
            self.i += len(keyword)
            return True
        return False

    def parse(self) -> Node:
        self.skip()
        if self.i == len(self.text):
            raise self.fail(
                'empty: expected a condition such as phase == "retrying" or calls.call-003 exists'
            )
        node = self.expr()
        self.skip()
        if self.i < len(self.text):
            if self.text[self.i] == ")":
                raise self.fail("a ) that closes nothing")
            raise self.fail(f"expected and, or or the end, but found {self._found()}")
        return node

    def _found(self) -> str:
        rest = self.text[self.i :]
        m = _BARE.match(rest)
        return repr(m.group() if m else rest[:1])

    def expr(self) -> Node:
        items = [self.conjunction()]
        while self.take("or"):
            items.append(self.conjunction())
        return items[0] if len(items) == 1 else BoolOp("or", tuple(items))

    def conjunction(self) -> Node:
        items = [self.negation()]
        while self.take("and"):
            items.append(self.negation())
        return items[0] if len(items) == 1 else BoolOp("and", tuple(items))

    def negation(self) -> Node:
        if self.take("not"):
            return Not(self.negation())
        return self.primary()

    def primary(self) -> Node:
        self.skip()
        if self.i >= len(self.text):
            raise self.fail("the condition ends too soon: expected a path, len(...), not or (")
        if self.text[self.i] == "(":
            start = self.i
            self.i += 1
            node = self.expr()
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != ")":
                raise self.fail("this ( is never closed", start)
            self.i += 1
            return node
        keyword = self.word()
        if keyword is not None:
            raise self.fail(
                f"expected a path before {keyword!r} (a key named {keyword} needs quotes: "
                f'"{keyword}")'
            )
        return self.atom()

    def atom(self) -> Node:
        length = False
        if self.text.startswith("len(", self.i):
            length = True
            self.i += 4
            self.skip()
        path, self.i = _read_path(self.text, self.i)
        if length:
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != ")":
                raise self.fail("expected ) to close len(")
            self.i += 1
        if path not in self.paths:
            self.paths.append(path)
        self.skip()
        if not length and self.take("exists"):
            return Exists(path)
        op = next((o for o in _OPS if self.text.startswith(o, self.i)), None)
        if op is None:
            if self.i < len(self.text) and self.text[self.i] == "=":
                raise self.fail("= compares nothing: use ==")
            expected = "an operator (== != < <= > >=)" + ("" if length else " or exists")
            where = "the end" if self.i >= len(self.text) else self._found()
            raise self.fail(f"expected {expected} after the path, but found {where}")
        self.i += len(op)
        self.skip()
        value = self.literal(op)
        return Compare(path, length, op, value)

    def literal(self, op: str) -> Any:
        if self.i >= len(self.text):
            raise self.fail(
                f'expected a JSON value after {op}, such as "retrying", 1000, true or null'
            )

        def refuse(name: str) -> Any:
            raise self.fail(f"{name} is not a JSON value")

        try:
            value, end = json.JSONDecoder(parse_constant=refuse).raw_decode(self.text, self.i)
        except json.JSONDecodeError:
            found = self._found()
            hint = ' (strings need double quotes: "...")' if _BARE.match(self.text, self.i) else ""
            raise self.fail(
                f'expected a JSON value after {op}, such as "retrying", 1000, true or null, '
                f"but found {found}{hint}"
            ) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail("a number too large for JSON")
        if end < len(self.text) and self.text[end] not in " \t)":
            raise self.fail(f"unexpected {self.text[end]!r} after the value", end)
        self.i = end
        return value


@dataclass(frozen=True)
class Condition:
    """A parsed condition: the text it came from, what it reads, how to test it."""

    text: str
    root: Node
    #: Every path it reads, in order of appearance, each once.
    paths: tuple[StatePath, ...]

    def values_in(self, state: Any) -> dict[StatePath, Any]:
        """The value at each of its paths in ``state`` (:data:`ABSENT` if none)."""
        return {path: lookup(state, path) for path in self.paths}

    def holds(self, values: Mapping[StatePath, Any]) -> bool:
        """True given the value at each path (as :meth:`values_in` gives them)."""
        return self.root.holds(values)

    def evaluate(self, state: Any) -> bool:
        """True in ``state``."""
        return self.root.holds(self.values_in(state))

    def normalised(self) -> str:
        """The condition re-written from its parse (keys quoted where needed,
        parentheses where precedence needs them)."""
        return self.root.text()


def parse_condition(text: str) -> Condition:
    """Parse ``text``; raises :class:`ConditionError` with the column."""
    parser = _Parser(text)
    root = parser.parse()
    return Condition(text, root, tuple(parser.paths))


def looks_like_seq(text: str) -> bool:
    """What ``:`` was given is a seq (``42``), not a condition."""
    return text.strip().isdigit()
