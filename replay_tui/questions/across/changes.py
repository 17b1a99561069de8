"""What both ways of answering share: the answers (:class:`Turn`,
:class:`PathChange`, a seq's :data:`Moves`), a change's value shown for
people, what a condition reads at each of its paths, and what is kept of a
value to tell that it changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.safe_text import clip, mask_secrets
from replay_tui.questions.condition import ABSENT, Compare, Condition, Exists, StatePath
from replay_tui.state import canonical
from replay_tui.state.persistent import thaw

#: {path: (old, new)} for the watched paths an event changed.
Moves = dict[StatePath, tuple[Any, Any]]


@dataclass(frozen=True, slots=True)
class Turn:
    """A seq after which a condition holds and before which it did not
    (0: it holds for the initial state), and what changed at its paths."""

    seq: int
    moves: tuple[tuple[StatePath, Any, Any], ...]
    #: The event's kind, when the search saw it (a forward pass does).
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class PathChange:
    """The value at a path changed at ``seq``: ``added``, ``changed`` or ``removed``."""

    seq: int
    op: str
    old: Any  # ABSENT when added
    new: Any  # ABSENT when removed
    #: The event's kind, when the search saw it (a forward pass does).
    kind: str | None = None

    def to_json(self, kind: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "kind": kind, "op": self.op}
        if self.old is not ABSENT:
            out["old"] = self.old
        if self.new is not ABSENT:
            out["new"] = self.new
        return out


#: An object or list with more items than this is shown by its size.
BRIEF_ITEMS = 20


def shown_value(value: Any, limit: int, *, reveal: bool = True) -> str:
    """A value of a change for people (``history``, the watch list): JSON cut
    to ``limit`` characters, a big object or list by its size (it may be
    frozen, read from the state store), ``absent`` where there is none, and
    secret-looking values masked unless ``reveal``. Not yet escaped."""
    if value is ABSENT:
        return "absent"
    if type(value) not in SCALAR_TYPES:
        if isinstance(value, Mapping) and len(value) > BRIEF_ITEMS:
            return f"{{…}} {len(value):,} keys"
        if isinstance(value, Sequence) and not isinstance(value, str) and len(value) > BRIEF_ITEMS:
            return f"[…] {len(value):,} items"
        value = thaw(value)
        if not reveal:
            value = mask_secrets(value)
    return clip(canonical.dumps(value).decode(), limit)


def needs_of(condition: Condition) -> dict[StatePath, str]:
    """What a condition reads at each of its paths: ``value`` (compared),
    ``len`` (only its length) or ``exists`` (only whether it is there). A
    watcher then copies a big object only when its value is compared."""
    rank = {"exists": 0, "len": 1, "value": 2}
    needs: dict[StatePath, str] = {}

    def visit(node: Any) -> None:
        if isinstance(node, Compare):
            need = "len" if node.length else "value"
        elif isinstance(node, Exists):
            need = "exists"
        else:
            for child in getattr(node, "items", ()) or (node.inner,):
                visit(child)
            return
        if rank[need] > rank[needs.get(node.path, "exists")] or node.path not in needs:
            needs[node.path] = need

    visit(condition.root)
    return {path: needs[path] for path in condition.paths}


class Snapshot:
    """An object or list as it was: its canonical bytes (compared) and, when
    asked, its value again."""

    __slots__ = ("data",)

    def __init__(self, value: Any) -> None:
        self.data = strict_json.dumps(value, option=orjson.OPT_SORT_KEYS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Snapshot) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def value(self) -> Any:
        return strict_json.loads_written(self.data)


class Length:
    """What ``len`` and ``exists`` need of a value: that it is there, and its length."""

    __slots__ = ("n",)

    def __init__(self, n: int | None) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Length) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)


SCALARS = (str, int, float, bool, type(None))
SCALAR_TYPES = frozenset(SCALARS)


def observe_change(value: Any, need: str) -> Any:
    """What is kept of the value at a path, to tell a change."""
    if value is ABSENT:
        return ABSENT
    if need == "exists":
        return True
    if need == "len":
        return Length(
            None if isinstance(value, (int, float, bool)) or value is None else len(value)
        )
    if isinstance(value, SCALARS):
        return (type(value), value)  # 1 and true differ in JSON, not in Python
    return Snapshot(value)
