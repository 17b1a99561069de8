"""Questions across time: at which seq a condition *turns* true (``when``),
and every seq at which the value at a path changed (``history``).

Two ways to answer, one meaning:

- :class:`StateWatcher` looks at each state as the forward pass makes it
  (``Replay.observer``): the CLI answers at the cost of ``check`` plus a
  few lookups an event.
- :class:`PatchScan` reads the patch log of a replay already done (the app):
  it finds the events whose patches can touch the paths by searching the
  log's bytes, decodes only those, and keeps the values at the paths up to
  date from their patches, so a question costs what touched its paths, not
  the run's length times the state's size.

Both give, per seq where something watched changed, ``{path: (old, new)}``;
:func:`turns` and :func:`path_changes` make the answers of it.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.core.safe_text import clip, mask_secrets
from replay_tui.questions.condition import (
    ABSENT,
    Compare,
    Condition,
    Exists,
    StatePath,
    key_index,
    lookup,
)
from replay_tui.state import canonical
from replay_tui.state.persistent import thaw

if TYPE_CHECKING:
    from replay_tui.engine.replay import Replay
    from replay_tui.state.history import History

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
    if type(value) not in _SCALAR_TYPES:
        if isinstance(value, Mapping) and len(value) > BRIEF_ITEMS:
            return f"{{…}} {len(value):,} keys"
        if isinstance(value, Sequence) and not isinstance(value, str) and len(value) > BRIEF_ITEMS:
            return f"[…] {len(value):,} items"
        value = thaw(value)
        if not reveal:
            value = mask_secrets(value)
    return clip(canonical.dumps(value).decode(), limit)


def _op(old: Any, new: Any) -> str:
    if old is ABSENT:
        return "added"
    if new is ABSENT:
        return "removed"
    return "changed"


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


# -- watching states as they are made -------------------------------------------


class _Snap:
    """An object or list as it was: its canonical bytes (compared) and, when
    asked, its value again."""

    __slots__ = ("data",)

    def __init__(self, value: Any) -> None:
        self.data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Snap) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def value(self) -> Any:
        return orjson.loads(self.data)


class _Len:
    """What ``len`` and ``exists`` need of a value: that it is there, and its length."""

    __slots__ = ("n",)

    def __init__(self, n: int | None) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Len) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)


_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def _observe(value: Any, need: str) -> Any:
    """What is kept of the value at a path, to tell a change."""
    if value is ABSENT:
        return ABSENT
    if need == "exists":
        return True
    if need == "len":
        return _Len(None if isinstance(value, (int, float, bool)) or value is None else len(value))
    if isinstance(value, _SCALARS):
        return (type(value), value)  # 1 and true differ in JSON, not in Python
    return _Snap(value)


def _shown(seen: Any) -> Any:
    """An observation as the value it stands for (a length for ``_Len``)."""
    if seen is ABSENT:
        return ABSENT
    if isinstance(seen, tuple):
        return seen[1]
    if isinstance(seen, _Snap):
        return seen.value()
    if isinstance(seen, _Len):
        return seen.n if seen.n is not None else True
    return seen


class TooBigToWatch(Exception):
    """A watched value is an object too big to compare after every event:
    ask the patch log instead (it costs what changed)."""


#: Bytes of an object compared after every event of a forward pass, at most.
WATCH_BYTES = 4096


class StateWatcher:
    """Watches paths in each state of a forward pass (see ``Replay.observer``).

    Give it the initial state with :meth:`start`, then each state in order
    with :meth:`see`; it returns what changed at the paths, or ``None``. An
    object compared whole costs its size an event: past :data:`WATCH_BYTES`
    it raises :class:`TooBigToWatch`.
    """

    def __init__(self, needs: Mapping[StatePath, str]) -> None:
        self.needs = dict(needs)
        self._seen: dict[StatePath, Any] = {}

    def _observe(self, value: Any, need: str) -> Any:
        seen = _observe(value, need)
        if isinstance(seen, _Snap) and len(seen.data) > WATCH_BYTES:
            raise TooBigToWatch(f"{len(seen.data):,} bytes")
        return seen

    def start(self, state: Any) -> None:
        self._seen = {p: self._observe(lookup(state, p), need) for p, need in self.needs.items()}

    def see(self, state: Any) -> Moves | None:
        moves: Moves | None = None
        seen = self._seen
        for path, need in self.needs.items():
            value = lookup(state, path)
            was = seen[path]
            if need == "value" and type(value) in _SCALAR_TYPES:
                # the common case, a counter or a status: compared as it is
                if type(was) is tuple and was[0] is type(value) and was[1] == value:
                    continue
                now: Any = (type(value), value)
            else:
                now = self._observe(value, need)
            if now != was:
                if moves is None:
                    moves = {}
                moves[path] = (_shown(was), _shown(now))
                seen[path] = now
        return moves


class WhenSearch:
    """``when``, watching a forward pass: the seqs at which ``condition``
    turns true, and what changed at its paths there."""

    def __init__(self, condition: Condition, *, every: bool = True) -> None:
        self.condition = condition
        self.every = every
        self.watcher = StateWatcher(needs_of(condition))
        self.turns: list[Turn] = []
        self._holds = False
        self.done = False

    def start(self, state: Any) -> None:
        self.watcher.start(state)
        self._holds = self.condition.evaluate(state)
        if self._holds:
            self.turns.append(Turn(0, ()))
            self.done = not self.every

    def from_replay(self, replay: Replay) -> None:
        """Answer from a finished replay instead (its patch log, if it has one)."""
        self.turns = []
        for turn in iter_turns(replay, self.condition, replay.valid):
            self.turns.append(turn)
            if not self.every:
                break
        self.done = bool(self.turns) and not self.every

    def see(self, seq: int, state: Any, kind: str | None = None) -> None:
        moves = self.watcher.see(state)
        if moves is None:
            return
        holds = self.condition.evaluate(state)
        if holds and not self._holds and not self.done:
            self.turns.append(Turn(seq, tuple((p, o, n) for p, (o, n) in moves.items()), kind))
            self.done = not self.every
        self._holds = holds


class HistorySearch:
    """``history``, watching a forward pass: each seq at which the value at
    ``path`` changed (added, changed, removed)."""

    def __init__(self, path: StatePath) -> None:
        self.path = path
        self.watcher = StateWatcher({path: "value"})
        self.changes: list[PathChange] = []
        self.replay: Replay | None = None

    def start(self, state: Any) -> None:
        self.watcher.start(state)

    def from_replay(self, replay: Replay) -> None:
        """Answer from a finished replay instead (its patch log, if it has
        one): old and new may then be :class:`Later`, read with :meth:`value`."""
        self.replay = replay
        self.changes = list(iter_path_changes(replay, self.path, replay.valid))

    def value(self, value: Any, *, frozen: bool = False) -> Any:
        """A change's old or new value, read from the replay if left there."""
        if self.replay is None:
            return value
        return resolve(self.replay, self.path, value, frozen=frozen)

    def see(self, seq: int, state: Any, kind: str | None = None) -> None:
        moves = self.watcher.see(state)
        if moves is not None:
            old, new = moves[self.path]
            self.changes.append(PathChange(seq, _op(old, new), old, new, kind))


# -- reading the patch log ------------------------------------------------------


def _key_pattern(key: str | int) -> bytes:
    """A key as a patch row writes it, as a regular expression: a key of
    digits alone (``checks.0``) is also the list index it reads (``0``)."""
    own = re.escape(orjson.dumps(key))
    index = key_index(key) if isinstance(key, str) else None
    if index is None:
        return own
    return b"(?:" + own + b"|" + str(index).encode() + b")"


def _needles(path: StatePath, need: str) -> tuple[list[bytes], re.Pattern[bytes] | None]:
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


class _Spec:
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


def _copy(value: Any) -> Any:
    """A private copy of a JSON value (patch values may be shared)."""
    if isinstance(value, _SCALARS):
        return value
    return orjson.loads(orjson.dumps(value))


def _set_inside(value: Any, rest: list[Any], new: Any) -> Any:
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
            node.append(_copy(new))
        else:
            node[last] = _copy(new)
    elif isinstance(node, dict) and isinstance(last, str):
        if new is ABSENT:
            node.pop(last, None)
        else:
            node[last] = _copy(new)
    return value


class _Sized:
    """Stands in for an object or list whose length alone is watched."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Sized) and other.n == self.n

    def __hash__(self) -> int:
        return self.n


def _kept(value: Any, need: str) -> Any:
    """What a scan keeps of a value: all of it, its length, or that it is there."""
    if value is ABSENT:
        return ABSENT
    if need == "exists":
        return True
    if need == "len" and not isinstance(value, _SCALARS):
        return _Sized(len(value))
    return _copy(value)


def _touching(
    log: Any,
    start: int,
    until: int,
    patterns: list[re.Pattern[bytes]],
    cancelled: threading.Event | None,
) -> Iterator[tuple[int, list[list[Any]] | None]]:
    """Events ``start+1 .. until`` of a patch log whose record matches one of
    ``patterns`` (see :func:`_needles`), as (seq, decoded rows), read a chunk
    at a time; after each chunk (last seq, None): everything up to it is
    read. Stops between chunks when ``cancelled``."""
    where = bisect.bisect_right
    seq = start
    while seq < until:
        if cancelled is not None and cancelled.is_set():
            return
        first, last = seq + 1, min(until, seq + PatchScan.CHUNK_EVENTS)
        data, starts = log.span(first, last)
        view = memoryview(data)
        found: set[int] = set()
        for pattern in patterns:
            found.update(where(starts, m.start()) - 1 for m in pattern.finditer(data))
        for k in sorted(found):
            yield first + k, orjson.loads(view[starts[k] : starts[k + 1]])
        yield last, None
        seq = last


class PatchScan:
    """The values at some paths, carried forward through a replay's patch log.

    :meth:`advance` reads events ``self.seq + 1 ..`` and yields each seq at
    which a value changed, with ``{path: (old, new)}`` (private copies).
    A path whose length alone is watched (``len(calls)``) keeps only that,
    so a big object is never copied. Resumable: a growing run is scanned on
    from where the last scan stopped.
    """

    CHUNK_EVENTS = 65536

    def __init__(self, history: History, needs: Mapping[StatePath, str], start: int = 0) -> None:
        self.history = history
        self.needs = dict(needs)
        state = history.state_at(start)
        self.values: dict[StatePath, Any] = {
            p: _kept(thaw(lookup(state, p)) if need == "value" else lookup(state, p), need)
            for p, need in self.needs.items()
        }
        self.seq = start
        self._specs = [_Spec(p, need) for p, need in self.needs.items()]
        needles: set[bytes] = set()
        self._patterns: list[re.Pattern[bytes]] = []
        for p, need in self.needs.items():
            found, pattern = _needles(p, need)
            needles.update(found)
            if pattern is not None:
                self._patterns.append(pattern)
        self._needles = sorted(needles)
        self._finder = re.compile(b"|".join(self._needles))
        #: One value watched at a leaf: rows exactly at it take the short way
        #: (a path with a key of digits alone, which may be an index, takes the general one).
        self._leaf: tuple[StatePath, list[Any]] | None = None
        plain = len(self._specs) == 1 and not self._specs[0].digits
        if plain and self._specs[0].need == "value":
            self._leaf = (self._specs[0].path, self._specs[0].whole)
        self._sized = plain and self._specs[0].need == "len"

    def advance(
        self, until: int, cancelled: threading.Event | None = None
    ) -> Iterator[tuple[int, Moves]]:
        log = self.history.patches
        until = min(until, len(log))
        apply = (
            self._apply_leaf
            if self._leaf is not None
            else (self._apply_sized if self._sized else self._apply)
        )
        patterns = [self._finder, *self._patterns]
        for seq, rows in _touching(log, self.seq, until, patterns, cancelled):
            self.seq = seq
            if rows is not None:
                moves = apply(rows)
                if moves:
                    yield seq, moves

    def _apply_sized(self, rows: list[list[Any]]) -> Moves | None:
        """:meth:`_apply` for one object or list whose length alone is
        watched, and rows right under it that add or remove (a call proposed)."""
        spec = self._specs[0]
        whole, m, path = spec.whole, spec.m, spec.path
        kept = self.values[path]
        if not isinstance(kept, _Sized):
            return self._apply(rows)
        size = kept.n
        for row in rows:
            q = row[0]
            n = len(q)
            if n == m + 1 and q[:m] == whole:
                op = row[1]
                if op == 1:
                    size += 1
                elif op == 2:
                    last = q[-1]
                    size = min(size, last) if isinstance(last, int) else size - 1
            elif n <= m and q == spec.prefixes[n]:
                return self._apply(rows)  # the object itself replaced: the general way
        if size == kept.n:
            return None
        self.values[path] = _Sized(size)
        return {path: (kept.n, size)}

    def _apply_leaf(self, rows: list[list[Any]]) -> Moves | None:
        """:meth:`_apply` for one watched value at a path and rows exactly at
        it holding scalars (a counter, a status): the common case, made cheap."""
        path, whole = self._leaf  # type: ignore[misc]
        m = len(whole)
        found: Any = _UNSET
        for row in rows:
            q = row[0]
            if q == whole:
                op = row[1]
                new = row[3] if op == 0 else (row[2] if op == 1 else ABSENT)
                if not isinstance(new, _SCALARS) and new is not ABSENT:
                    return self._apply(rows)
                found = new
            else:
                n = len(q)
                if (n < m and q == whole[:n]) or (n > m and q[:m] == whole):
                    return self._apply(rows)  # above or under it: the general way
        if found is _UNSET:
            return self._apply(rows)
        old = self.values[path]
        if type(old) is type(found) and old == found:
            return None
        self.values[path] = found
        return {path: (old, found)}

    def _apply(self, rows: list[list[Any]]) -> Moves | None:
        """One event's patch rows ``[path, op, old/new...]`` (see patchlog)."""
        values = self.values
        before: dict[StatePath, Any] | None = None
        for row in rows:
            raw = row[0]
            n = len(raw)
            for spec in self._specs:
                m = spec.m
                q = spec.norm(raw) if spec.digits else raw
                if n <= m:
                    if q != spec.prefixes[n]:
                        continue
                    rel = 1 if n == m else 2
                elif q[:m] != spec.whole:
                    continue
                else:
                    rel = 3
                p = spec.path
                need = spec.need
                if before is None:
                    before = {}
                if p not in before:
                    before[p] = values[p]
                op = row[1]
                new = row[3] if op == 0 else (row[2] if op == 1 else ABSENT)
                if rel == 1:
                    values[p] = _kept(new, need)
                elif rel == 2:
                    values[p] = _kept(lookup(new, spec.path[n:]), need)  # absent: absent
                elif values[p] is ABSENT or need == "exists":
                    continue  # something under it changed: it is still there
                elif need == "len":
                    if n == m + 1 and op != 0 and isinstance(values[p], _Sized):
                        size = values[p].n
                        last = q[-1]
                        if op == 1:
                            values[p] = _Sized(size + 1)
                        else:
                            values[p] = _Sized(
                                min(size, last) if isinstance(last, int) else size - 1
                            )
                else:
                    if values[p] is before[p] and not isinstance(values[p], _SCALARS):
                        values[p] = _copy(values[p])  # keep the old value to show
                    values[p] = _set_inside(values[p], q[m:], new)
        if before is None:
            return None
        moves: Moves = {}
        for p, old in before.items():
            now = values[p]
            if not _same(old, now):
                moves[p] = (_unsized(old), _unsized(now))
        return moves


def _unsized(kept: Any) -> Any:
    """A kept value as shown: a length for one whose length alone is watched."""
    return kept.n if isinstance(kept, _Sized) else kept


def _same(a: Any, b: Any) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is b
    if isinstance(a, _Sized) or isinstance(b, _Sized):
        return bool(a == b)
    return bool(_observe(a, "value") == _observe(b, "value"))


def scan_turns(
    scan: PatchScan,
    condition: Condition,
    until: int,
    holds: bool,
    cancelled: threading.Event | None = None,
) -> Iterator[Turn]:
    """Turns of ``condition`` from ``scan``'s seq (where it ``holds`` or not)
    up to ``until``, from the patch log."""
    for seq, moves in scan.advance(until, cancelled):
        now = condition.holds(scan.values)
        if now and not holds:
            yield Turn(seq, tuple((p, o, n) for p, (o, n) in moves.items()))
        holds = now


def iter_turns(
    replay: Replay,
    condition: Condition,
    until: int,
    cancelled: threading.Event | None = None,
) -> Iterator[Turn]:
    """Each seq in 0..until at which ``condition`` turns true, in order: from
    the patch log when the replay keeps one, else by running the rules again."""
    if replay.history is not None:
        scan = PatchScan(replay.history, needs_of(condition))
        holds = condition.holds(scan.values)
        if holds:
            yield Turn(0, ())
        root = condition.root
        if isinstance(root, Compare) and not root.length and scan._leaf is not None:
            yield from _leaf_turns(scan, root, until, holds, cancelled)
        else:
            yield from scan_turns(scan, condition, until, holds, cancelled)
        return
    search = WhenSearch(condition)
    yield from _rerun(replay, search, search.turns, until, cancelled)


def _leaf_turns(
    scan: PatchScan,
    compare: Compare,
    until: int,
    holds: bool,
    cancelled: threading.Event | None,
) -> Iterator[Turn]:
    """:func:`scan_turns` for the commonest question, one comparison of one
    value (``spent.tokens > 1000``, ``phase == "retrying"``), in one loop:
    the comparison made once, only where a patch wrote a new value."""
    log = scan.history.patches
    until = min(until, len(log))
    path = compare.path
    test = compare.test
    apply = scan._apply_leaf
    for seq, rows in _touching(log, scan.seq, until, [scan._finder], cancelled):
        scan.seq = seq
        moves = apply(rows) if rows is not None else None
        if not moves:
            continue
        old, new = moves[path]
        now = new is not ABSENT and test(new)
        if now and not holds:
            yield Turn(seq, ((path, old, new),))
        holds = now


def _rerun(
    replay: Replay,
    search: WhenSearch | HistorySearch,
    found: list[Any],
    until: int,
    cancelled: threading.Event | None,
) -> Iterator[Any]:
    """``search`` over the states of the rules run again, yielding what it
    adds to ``found`` as it goes (no patch log to read)."""
    states = replay.iter_states(until, cancelled.is_set if cancelled is not None else None)
    for seq, state in states:
        count = len(found)
        if seq == 0:
            search.start(state)
        else:
            search.see(seq, state)
        yield from found[count:]


class Later:
    """The value at the watched path after ``seq`` events, not copied out of
    the state store (an object changed inside): :func:`resolve` reads it."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Later) and other.seq == self.seq

    def __hash__(self) -> int:
        return self.seq

    def __repr__(self) -> str:
        return f"Later({self.seq})"


def resolve(replay: Replay, path: StatePath, value: Any, *, frozen: bool = False) -> Any:
    """A change's old or new value: itself, or (a :class:`Later`) the value
    read from the state store, frozen (cheap: shared, for its size or a
    glance) or as plain JSON."""
    if not isinstance(value, Later):
        return value
    found = lookup(replay.frozen_at(value.seq), path)
    return found if frozen or found is ABSENT else thaw(found)


class PathScan:
    """Every change of the value at one path, from a replay's patch log.

    Nothing is copied or kept but whether the path is there: an event whose
    patches touch the path changed it (a patch is only recorded for a
    change), one above it changed it if the value under it differs. Old and
    new come from the patch itself where it holds them, else as
    :class:`Later` (an object changed inside: read it from the state store if
    it is shown), so watching a big object costs what changed, not its size.
    """

    def __init__(self, history: History, path: StatePath, start: int = 0) -> None:
        self.history = history
        self.path = path
        self.spec = _Spec(path, "value")
        self.present = lookup(history.state_at(start), path) is not ABSENT
        self.seq = start
        self._needles, _ = _needles(path, "value")

    def advance(self, until: int, cancelled: threading.Event | None = None) -> Iterator[PathChange]:
        log = self.history.patches
        until = min(until, len(log))
        finder = re.compile(b"|".join(self._needles))
        for seq, rows in _touching(log, self.seq, until, [finder], cancelled):
            self.seq = seq
            if rows is not None:
                change = self._event(rows, seq)
                if change is not None:
                    yield change

    def _event(self, rows: list[list[Any]], seq: int) -> PathChange | None:
        spec = self.spec
        whole = spec.whole
        m = spec.m
        first: Any = _UNSET
        last: Any = _UNSET
        present = self.present
        for row in rows:
            q = spec.norm(row[0]) if spec.digits else row[0]
            if q == whole:  # the value itself
                op = row[1]
                was = ABSENT if op == 1 else row[2]
                now = row[3] if op == 0 else (row[2] if op == 1 else ABSENT)
            else:
                n = len(q)
                if n > m:
                    if q[:m] != whole:
                        continue
                    if last is not _UNSET and isinstance(last, Later):
                        continue  # inside it again: already known to have changed
                    was, now = Later(seq - 1), Later(seq)  # inside it: it is there, changed
                elif q == spec.prefixes[n]:  # above it
                    op = row[1]
                    rest = spec.path[n:]
                    was = ABSENT if op == 1 else lookup(row[2], rest)
                    new = row[3] if op == 0 else (row[2] if op == 1 else ABSENT)
                    now = lookup(new, rest)  # absent: absent
                    if _same(was, now):
                        continue  # the value under it is the same
                else:
                    continue
            if first is _UNSET:
                first = was
            last = now
            present = now is not ABSENT
        if first is _UNSET:
            return None
        before = self.present
        self.present = present
        op = "added" if not before else ("removed" if not present else "changed")
        if isinstance(first, Later) and not before:
            first = ABSENT
        return PathChange(seq, op, first, last)


_UNSET: Any = object()


class LengthScan:
    """``len(PATH)`` at each seq where it changed, from the patch log: the
    watch pane's chart (and the report's) of an object or a list. A
    :class:`PatchScan` that keeps the length alone, so a 125,000-key object
    costs its adds and removes, never a copy. Resumable like it."""

    def __init__(self, history: History, path: StatePath, start: int = 0) -> None:
        self.path = path
        self._scan = PatchScan(history, {path: "len"}, start)

    @property
    def value(self) -> Any:
        """The length where the scan is (a scalar there: itself; ABSENT)."""
        return _unsized(self._scan.values[self.path])

    def advance(
        self, until: int, cancelled: threading.Event | None = None
    ) -> Iterator[tuple[int, Any]]:
        """(seq, new length) for each change in ``self.seq + 1 .. until``."""
        for seq, moves in self._scan.advance(until, cancelled):
            yield seq, moves[self.path][1]


def iter_path_changes(
    replay: Replay, path: StatePath, until: int, cancelled: threading.Event | None = None
) -> Iterator[PathChange]:
    """Each seq in 1..until at which the value at ``path`` changed, in order.
    From the patch log, old and new may be :class:`Later`: see :func:`resolve`."""
    if replay.history is not None:
        yield from PathScan(replay.history, path).advance(until, cancelled)
        return
    search = HistorySearch(path)
    yield from _rerun(replay, search, search.changes, until, cancelled)


def condition_turns(
    replay: Replay, condition: Condition, until: int, cancelled: threading.Event | None = None
) -> list[Turn]:
    """Every seq in 0..until at which ``condition`` turns true (the app's way)."""
    return list(iter_turns(replay, condition, until, cancelled))


def path_changes(
    replay: Replay, path: StatePath, until: int, cancelled: threading.Event | None = None
) -> list[PathChange]:
    """Every seq in 1..until at which the value at ``path`` changed (the
    app's way), with old and new read out (:func:`resolve`)."""
    return [
        PathChange(c.seq, c.op, resolve(replay, path, c.old), resolve(replay, path, c.new))
        for c in iter_path_changes(replay, path, until, cancelled)
    ]
