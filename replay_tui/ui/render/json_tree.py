"""A JSON value drawn one line at a time, containers expanded on demand.

The full state of a long run holds 125,000 calls: building it as text costs
what the state holds, on every step. :class:`JsonTree` instead knows how many
lines each expanded container takes and finds line ``y`` by walking down to
it, so drawing a screen costs the lines on it (and, in a big container, one
pass over its keys to place the few children that are open).

What is open: the root; small containers (up to :data:`AUTO` children, not
themselves one of many); every container on the way to a changed path, so
the ``●`` marks are on screen; and what the person opened or closed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from rich.text import Text

from replay_tui.core.safe_text import MASK, clip, escape_controls, is_secret_key
from replay_tui.core.words import plural
from replay_tui.state.diff import Path
from replay_tui.ui.render.json_text import KEY, MARK, MASKED, MAX_DEPTH, PUNCT, scalar_text

#: Containers with more children than this start closed, and so do their children.
AUTO = 50


def _container(value: Any) -> bool:
    return isinstance(value, Mapping | list | tuple) or (
        isinstance(value, Sequence) and not isinstance(value, str | bytes)
    )


def _is_dict(value: Any) -> bool:
    return isinstance(value, Mapping)


@dataclass(frozen=True, slots=True)
class Line:
    """Where line ``y`` of the tree is: the value, its path and what part of it."""

    path: Path
    value: Any
    depth: int
    key: str | int | None
    last: bool
    part: str  # "leaf" (scalar or closed container), "open" or "close"


class JsonTree:
    """Lines of ``value`` as indented JSON, computed on demand."""

    def __init__(
        self,
        value: Any,
        *,
        marked: Collection[Path] = (),
        opened: Collection[Path] = (),
        closed: Collection[Path] = (),
        reveal: bool = False,
        limit: int = 200,
    ) -> None:
        self.value = value
        self.marks = set(marked)
        self.prefixes = {p[:i] for p in self.marks for i in range(len(p))}
        self.opened = set(opened)
        self.closed = set(closed)
        self.reveal = reveal
        self.limit = limit
        self._counts: dict[Path, int] = {}
        self._special: dict[Path, list[tuple[int, str | int]]] = {}
        self._wanted: dict[Path, set[str | int]] | None = None

    # -- what is open ---------------------------------------------------------
    def is_open(self, path: Path, value: Any, crowded: bool) -> bool:
        if not _container(value) or not value or len(path) >= MAX_DEPTH:
            return False
        if self._hidden(path):
            return False
        if path in self.closed:  # the person's choice first
            return False
        if path in self.opened or path in self.prefixes or path in self.marks:
            return True
        return not path or (not crowded and len(value) <= AUTO)

    def _hidden(self, path: Path) -> bool:
        key = path[-1] if path else None
        return isinstance(key, str) and is_secret_key(key) and not self.reveal

    def _wanted_children(self, path: Path) -> set[str | int]:
        """Children of ``path`` that may be open although their parent is
        crowded: opened by the person or on the way to a change."""
        if self._wanted is None:
            wanted: dict[Path, set[str | int]] = {}
            for p in (*self.opened, *self.prefixes, *self.marks):
                if p:
                    wanted.setdefault(p[:-1], set()).add(p[-1])
            self._wanted = wanted
        return self._wanted.get(path, set())

    def _special_children(self, path: Path, value: Any) -> list[tuple[int, str | int]]:
        """(position, key) of the open children of a crowded container, in order."""
        found = self._special.get(path)
        if found is None:
            wanted = self._wanted_children(path)
            found = []
            if wanted:
                if _is_dict(value):
                    keys = [k for k in wanted if isinstance(k, str) and k in value]
                    if keys:
                        where = set(keys)
                        found = [(i, k) for i, k in enumerate(value) if k in where]
                else:
                    found = sorted(
                        (k, k) for k in wanted if isinstance(k, int) and 0 <= k < len(value)
                    )
                found = [(i, k) for i, k in found if self.is_open((*path, k), value[k], True)]
            self._special[path] = found
        return found

    # -- sizes ----------------------------------------------------------------
    def __len__(self) -> int:
        return self._count(self.value, (), False)

    def _count(self, value: Any, path: Path, crowded: bool) -> int:
        if not self.is_open(path, value, crowded):
            return 1
        got = self._counts.get(path)
        if got is not None:
            return got
        n = len(value)
        if n <= AUTO:
            items = value.items() if _is_dict(value) else enumerate(value)
            total = 2 + sum(self._count(v, (*path, k), False) for k, v in items)
        else:
            total = 2 + n
            for _, k in self._special_children(path, value):
                total += self._count(value[k], (*path, k), True) - 1
        self._counts[path] = total
        return total

    # -- finding a line -------------------------------------------------------
    def line(self, y: int) -> Line:
        """Line ``y`` (0-based) of the tree."""
        return self._find(self.value, (), 0, None, True, y, False)

    def _find(
        self,
        value: Any,
        path: Path,
        depth: int,
        key: str | int | None,
        last: bool,
        y: int,
        crowded: bool,
    ) -> Line:
        while True:
            if not self.is_open(path, value, crowded):
                return Line(path, value, depth, key, last, "leaf")
            if y == 0:
                return Line(path, value, depth, key, last, "open")
            total = self._count(value, path, crowded)
            if y >= total - 1:
                return Line(path, value, depth, key, last, "close")
            y -= 1
            n = len(value)
            is_dict = _is_dict(value)
            if n <= AUTO:
                items = list(value.items()) if is_dict else list(enumerate(value))
                for i, (k, v) in enumerate(items):
                    size = self._count(v, (*path, k), False)
                    if y < size:
                        value, path, depth, key = v, (*path, k), depth + 1, k
                        last, crowded = i == n - 1, False
                        break
                    y -= size
                continue
            extra = 0
            inside: tuple[int, str | int, int] | None = None
            for pos, k in self._special_children(path, value):
                start = pos + extra
                if y < start:
                    break  # a closed child before this open one
                size = self._count(value[k], (*path, k), True)
                if y < start + size:
                    inside = (pos, k, y - start)
                    break
                extra += size - 1
            if inside is None:
                return self._child_leaf(value, path, depth, y - extra, is_dict)
            pos, k, y = inside
            value, path, depth, key = value[k], (*path, k), depth + 1, k
            last, crowded = pos == n - 1, True

    def _child_leaf(self, value: Any, path: Path, depth: int, pos: int, is_dict: bool) -> Line:
        k = _key_at(value, pos) if is_dict else pos
        return Line((*path, k), value[k], depth + 1, k, pos == len(value) - 1, "leaf")

    def line_of(self, target: Path) -> int | None:
        """The line where ``target`` starts, if every container above it is open."""
        value: Any = self.value
        path: Path = ()
        y = 0
        crowded = False
        for step in target:
            if not self.is_open(path, value, crowded):
                return None
            y += 1
            if len(value) <= AUTO:
                items = value.items() if _is_dict(value) else enumerate(value)
                for k, v in items:
                    if k == step:
                        break
                    y += self._count(v, (*path, k), False)
                else:
                    return None
                crowded = False
            else:
                pos = _position(value, step)
                if pos is None:
                    return None
                y += pos
                for p, k in self._special_children(path, value):
                    if p >= pos:
                        break
                    y += self._count(value[k], (*path, k), True) - 1
                crowded = True
            value, path = value[step], (*path, step)
        return y

    # -- drawing --------------------------------------------------------------
    def text(self, line: Line) -> Text:
        """Line as styled, inert text (data is never markup)."""
        indent = "  " * line.depth
        if line.path in self.marks:
            gutter = Text("● ", style=MARK)
        elif line.path in self.prefixes:
            gutter = Text("· ", style=MARK)
        else:
            gutter = Text("  ")
        comma = Text("" if line.last else ",", style=PUNCT)
        if line.part == "close":
            closing = "}" if _is_dict(line.value) else "]"
            return Text.assemble(Text("  "), indent, Text(closing, style=PUNCT), comma)
        head = Text.assemble(gutter, indent)
        if isinstance(line.key, str):
            head.append(escape_controls(_quoted(clip(line.key, self.limit))), style=KEY)
            head.append(": ", style=PUNCT)
        value = line.value
        if isinstance(line.key, str) and self._hidden(line.path) and value is not None:
            return Text.assemble(head, Text(MASK, style=MASKED), comma)
        if not _container(value):
            return Text.assemble(head, scalar_text(value, self.limit), comma)
        is_dict = _is_dict(value)
        if line.part == "open":
            return Text.assemble(head, Text("{" if is_dict else "[", style=PUNCT))
        if not value:
            return Text.assemble(head, Text("{}" if is_dict else "[]", style=PUNCT), comma)
        shut = Text("{…}" if is_dict else "[…]", style=PUNCT)
        n = len(value)
        what = (
            "nested too deep to show"
            if len(line.path) >= MAX_DEPTH
            else plural(n, "key" if is_dict else "item", sep=True)
        )
        return Text.assemble(head, shut, comma, Text(f" {what}", style="italic dim"))


def _quoted(key: str) -> str:
    return orjson.dumps(key).decode()


def _key_at(value: Any, pos: int) -> str:
    key_at = getattr(value, "key_at", None)
    if key_at is not None:
        return key_at(pos)  # type: ignore[no-any-return]
    for i, k in enumerate(value):
        if i == pos:
            return k  # type: ignore[no-any-return]
    raise IndexError(pos)


def _position(value: Any, step: str | int) -> int | None:
    if not _is_dict(value):
        return step if isinstance(step, int) and 0 <= step < len(value) else None
    if step not in value:
        return None
    for i, k in enumerate(value):
        if k == step:
            return i
    return None
