"""Reading the patch log of a replay already done: :class:`PatchScan`
carries the values at some paths forward, :class:`PathScan` finds every
change at one path, :class:`LengthScan` every change of one length. Each
decodes only the events whose patches can touch its paths (found by
searching the log's bytes), so a question costs what touched its paths."""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from replay_tui.core import strict_json
from replay_tui.questions.across.again import RowsAgain
from replay_tui.questions.across.changes import SCALARS, Moves, PathChange, Turn, needs_of
from replay_tui.questions.across.patch_rows import (
    RowSpec,
    Sized,
    copy_kept,
    kept_value,
    path_needles,
    same_value,
    set_inside,
    unsized,
)
from replay_tui.questions.condition import ABSENT, Compare, Condition, StatePath, lookup
from replay_tui.state.persistent import thaw

if TYPE_CHECKING:
    from replay_tui.engine.replay import Replay
    from replay_tui.state.history import History


def _touching(
    history: History,
    start: int,
    until: int,
    patterns: list[re.Pattern[bytes]],
    cancelled: threading.Event | None,
    again: RowsAgain | None = None,
) -> Iterator[tuple[int, list[list[Any]] | None]]:
    """Events ``start+1 .. until`` of ``history``'s patch log whose record
    matches one of ``patterns`` (see :func:`path_needles`), as (seq, decoded
    rows), read a chunk at a time; after each chunk (last seq, None):
    everything up to it is read. Where the log is made behind the pass and
    not made yet, a chunk is told by ``again`` (the rules run again,
    watching the paths alone) where it can, else made first; the first
    chunk is small, then larger, so an answer near the start comes before
    the whole log is made. Stops between chunks when ``cancelled``, or
    where the log ends."""
    where = bisect.bisect_right
    stop = None if cancelled is None else cancelled.is_set
    seq = start
    step = FIRST_CHUNK_EVENTS
    while seq < until:
        if cancelled is not None and cancelled.is_set():
            return
        end = min(until, seq + step, len(history))
        made = len(history.patches)
        if again is not None and again.usable and history.can_watch and made < end:
            if seq < made:
                end = made  # the part made already: read, not made again
            else:
                told = again.rows(history, seq + 1, end, cancelled)
                if told is not None:
                    yield from sorted(told.items())
                    yield end, None
                    seq = end
                    step = min(2 * step, PatchScan.CHUNK_EVENTS)
                    continue
                if cancelled is not None and cancelled.is_set():
                    return
        log = history.patch_log(end, stop)
        first, last = seq + 1, min(end, len(log))
        if last < first:
            return  # not made (cancelled), or no more events
        data, starts = log.span(first, last)
        view = memoryview(data)
        found: set[int] = set()
        for pattern in patterns:
            found.update(where(starts, m.start()) - 1 for m in pattern.finditer(data))
        for k in sorted(found):
            yield first + k, strict_json.loads_written(view[starts[k] : starts[k + 1]])
        yield last, None
        seq = last
        step = min(2 * step, PatchScan.CHUNK_EVENTS)


#: The first chunk of the patch log a scan reads (then twice as many each
#: time, up to ``PatchScan.CHUNK_EVENTS``): where the log is still being made
#: behind the pass, a few thousand events of it are made in a fraction of a
#: second, and the first answer past them needs no more.
FIRST_CHUNK_EVENTS = 4096


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
            p: kept_value(thaw(lookup(state, p)) if need == "value" else lookup(state, p), need)
            for p, need in self.needs.items()
        }
        self.seq = start
        self._specs = [RowSpec(p, need) for p, need in self.needs.items()]
        needles: set[bytes] = set()
        self._patterns: list[re.Pattern[bytes]] = []
        for p, need in self.needs.items():
            found, pattern = path_needles(p, need)
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
        #: Chunks the log has not reached, told by running the rules again.
        self.again = RowsAgain(self.needs)

    def advance(
        self, until: int, cancelled: threading.Event | None = None
    ) -> Iterator[tuple[int, Moves]]:
        apply = (
            self._apply_leaf
            if self._leaf is not None
            else (self._apply_sized if self._sized else self._apply)
        )
        patterns = [self._finder, *self._patterns]
        for seq, rows in _touching(self.history, self.seq, until, patterns, cancelled, self.again):
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
        if not isinstance(kept, Sized):
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
        self.values[path] = Sized(size)
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
                if not isinstance(new, SCALARS) and new is not ABSENT:
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
                    values[p] = kept_value(new, need)
                elif rel == 2:
                    values[p] = kept_value(lookup(new, spec.path[n:]), need)  # absent: absent
                elif values[p] is ABSENT or need == "exists":
                    continue  # something under it changed: it is still there
                elif need == "len":
                    if n == m + 1 and op != 0 and isinstance(values[p], Sized):
                        size = values[p].n
                        last = q[-1]
                        if op == 1:
                            values[p] = Sized(size + 1)
                        else:
                            values[p] = Sized(
                                min(size, last) if isinstance(last, int) else size - 1
                            )
                else:
                    if values[p] is before[p] and not isinstance(values[p], SCALARS):
                        values[p] = copy_kept(values[p])  # keep the old value to show
                    values[p] = set_inside(values[p], q[m:], new)
        if before is None:
            return None
        moves: Moves = {}
        for p, old in before.items():
            now = values[p]
            if not same_value(old, now):
                moves[p] = (unsized(old), unsized(now))
        return moves


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


def patch_log_turns(
    history: History,
    condition: Condition,
    until: int,
    cancelled: threading.Event | None = None,
) -> Iterator[Turn]:
    """Each seq in 0..until at which ``condition`` turns true, in order, from
    the patch log of ``history``."""
    scan = PatchScan(history, needs_of(condition))
    holds = condition.holds(scan.values)
    if holds:
        yield Turn(0, ())
    root = condition.root
    if isinstance(root, Compare) and not root.length and scan._leaf is not None:
        yield from _leaf_turns(scan, root, until, holds, cancelled)
    else:
        yield from scan_turns(scan, condition, until, holds, cancelled)


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
    path = compare.path
    test = compare.test
    apply = scan._apply_leaf
    for seq, rows in _touching(
        scan.history, scan.seq, until, [scan._finder], cancelled, scan.again
    ):
        scan.seq = seq
        moves = apply(rows) if rows is not None else None
        if not moves:
            continue
        old, new = moves[path]
        now = new is not ABSENT and test(new)
        if now and not holds:
            yield Turn(seq, ((path, old, new),))
        holds = now


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
        self.spec = RowSpec(path, "value")
        self.present = lookup(history.state_at(start), path) is not ABSENT
        self.seq = start
        self._needles, _ = path_needles(path, "value")
        self.again = RowsAgain({path: "value"})

    def advance(self, until: int, cancelled: threading.Event | None = None) -> Iterator[PathChange]:
        finder = re.compile(b"|".join(self._needles))
        for seq, rows in _touching(self.history, self.seq, until, [finder], cancelled, self.again):
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
                    if same_value(was, now):
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
        return unsized(self._scan.values[self.path])

    def advance(
        self, until: int, cancelled: threading.Event | None = None
    ) -> Iterator[tuple[int, Any]]:
        """(seq, new length) for each change in ``self.seq + 1 .. until``."""
        for seq, moves in self._scan.advance(until, cancelled):
            yield seq, moves[self.path][1]
