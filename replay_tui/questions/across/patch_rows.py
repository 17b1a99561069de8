"""The rows of a patch log that touch a watched path: the byte patterns
that find them, the path a row is matched against, and what a row does to
the value kept at the path (all of it, its length, or that it is there)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from replay_tui.questions.across.changes import SCALARS, observe_change
from replay_tui.questions.condition import ABSENT, StatePath, key_index


def _key_pattern(key: str | int) -> bytes:
    """A key as a patch row writes it, as a regular expression: a key of
    digits alone (``checks.0``) is also the list index it reads (``0``)."""
    own = re.escape(orjson.dumps(key))
    index = key_index(key) if isinstance(key, str) else None
    if index is None:
        return own
    return b"(?:" + own + b"|" + str(index).encode() + b")"


def path_needles(path: StatePath, need: str) -> tuple[list[bytes], re.Pattern[bytes] | None]:
    """What a patch record holds if it can change what is watched at ``path``,
    as regular expressions (alternatives of :func:`re.compile`).

    A row of the log starts ``[`` + its path Q as a JSON array. A patch at Q
    changes the value at P only if Q is P, lies under it, or lies above it:
    then the record holds ``[[k1,...,kn`` (Q is P or under it) or
    ``[[k1,...,ki],`` (Q above P, or Q is P). Whether P ``exists`` changes
    only with a patch at or above P; its length only with one at or above it
    or one right under it that adds or removes (a regular expression finds
    those). Bytes found in a value instead cost a decode that finds nothing.
    """
    keys = [_key_pattern(k) for k in path]
    above = [rb"\[\[" + b",".join(keys[:i]) + rb"\]," for i in range(1, len(keys) + 1)]
    if need == "value":
        return [rb"\[\[" + b",".join(keys), *above[:-1]], None
    if need == "exists":
        return above, None
    child = rb"\[\[" + b",".join(keys) + rb',(?:"(?:[^"\\]++|\\.)*+"|\d++)\],[12],'
    return above, re.compile(child)


class RowSpec:
    """One watched path, ready for the row loop."""

    __slots__ = ("digits", "m", "need", "path", "prefixes", "whole")

    def __init__(self, path: StatePath, need: str) -> None:
        self.path = path
        self.need = need
        self.m = len(path)
        whole = list(path)
        self.whole = whole
        self.prefixes = [whole[:i] for i in range(len(path) + 1)]
        #: (position, index) of each key of digits alone (``checks.0``): a
        #: row's list index there is that key (see :meth:`norm`).
        self.digits = tuple(
            (i, index)
            for i, key in enumerate(path)
            if isinstance(key, str) and (index := key_index(key)) is not None
        )

    def norm(self, q: list[Any]) -> list[Any]:
        """A row's path with the list index at each of :attr:`digits` written
        as the path's key, so that comparing it with :attr:`whole` reads
        ``checks.0`` of a list as ``checks[0]`` (and of an object as the key)."""
        out: list[Any] | None = None
        for i, index in self.digits:
            if i < len(q) and type(q[i]) is int and q[i] == index:
                if out is None:
                    out = list(q)
                out[i] = self.path[i]
        return q if out is None else out


def copy_kept(value: Any) -> Any:
    """A private copy of a JSON value (patch values may be shared)."""
    if isinstance(value, SCALARS):
        return value
    return orjson.loads(orjson.dumps(value))


def set_inside(value: Any, rest: list[Any], new: Any) -> Any:
    """``value`` with the patch at ``rest`` below it applied (as
    :func:`~replay_tui.state.history.apply_changes` applies one)."""
    node = value
    for key in rest[:-1]:
        if isinstance(node, dict) and isinstance(key, str):
            node = node.get(key)
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            return value
    last = rest[-1]
    if isinstance(node, list) and isinstance(last, int):
        if new is ABSENT:
            del node[last:]
        elif last >= len(node):
            node.append(copy_kept(new))
        else:
            node[last] = copy_kept(new)
    elif isinstance(node, dict) and isinstance(last, str):
        if new is ABSENT:
            node.pop(last, None)
        else:
            node[last] = copy_kept(new)
    return value


class Sized:
    """Stands in for an object or list whose length alone is watched."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sized) and other.n == self.n

    def __hash__(self) -> int:
        return self.n


def kept_value(value: Any, need: str) -> Any:
    """What a scan keeps of a value: all of it, its length, or that it is there."""
    if value is ABSENT:
        return ABSENT
    if need == "exists":
        return True
    if need == "len" and not isinstance(value, SCALARS):
        return Sized(len(value))
    return copy_kept(value)


def unsized(kept: Any) -> Any:
    """A kept value as shown: a length for one whose length alone is watched."""
    return kept.n if isinstance(kept, Sized) else kept


def same_value(a: Any, b: Any) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is b
    if isinstance(a, Sized) or isinstance(b, Sized):
        return bool(a == b)
    return bool(observe_change(a, "value") == observe_change(b, "value"))
