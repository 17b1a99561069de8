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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# paths are the state's; conditions are written over them (re-exported)
from replay_tui.state.paths import ABSENT as ABSENT
from replay_tui.state.paths import BARE, KEYWORDS, read_path
from replay_tui.state.paths import PathError as PathError
from replay_tui.state.paths import StatePath as StatePath
from replay_tui.state.paths import format_path as format_path
from replay_tui.state.paths import key_index as key_index
from replay_tui.state.paths import lookup as lookup
from replay_tui.state.paths import parse_path as parse_path

#: A path that does not parse is a condition that does not parse.
ConditionError = PathError


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
        m = BARE.match(self.text, self.i)
        if m is None or m.group() not in KEYWORDS:
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
        m = BARE.match(rest)
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
        path, self.i = read_path(self.text, self.i)
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
            hint = ' (strings need double quotes: "...")' if BARE.match(self.text, self.i) else ""
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
