"""Every trace's turns in one order, kept as traces change, at the cost of the change.

After each record only that record's trace is derived again; what the
state shows across traces (the turns in order of their start, joined where
one continues another, the token totals, the session key) was then built
again from every trace, so a file's time grew with the square of its turns.
:class:`TurnOrder` keeps the turns sorted (start, anchor span, the trace's
first-seen rank, the turn's index in its trace: what a stable sort of the
traces in that rank gives) and moves only the changed trace's turns; it
keeps the totals and, per session source, the earliest hit as the traces
change, and says from which position the ordered turns differ, so the
state is written from there on only. Joining continuations (provider-only
telemetry, root-anchored turns) reads neighbours: with any root-anchored
turn the whole list is joined again, as before.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Any

from replay_tui.reducers.otel_spans import SESSION_SOURCES
from replay_tui.reducers.otel_turns import SessionHit, TraceResult, Turn, join_turns, session_found

_Key = tuple[int, str, int, int]


class TurnOrder:
    """The turns of every trace in order (see the module)."""

    def __init__(self) -> None:
        self.keys: list[_Key] = []
        self.turns: list[Turn] = []
        self._of: dict[str, list[Turn]] = {}
        self._rank: dict[str, int] = {}
        self._hits: dict[str, list[SessionHit | None]] = {}
        self._best: list[tuple[SessionHit, str] | None] = [None] * len(SESSION_SOURCES)
        self.roots = 0
        self.tokens = [0, 0]
        self.content = 0

    def update(self, results: Mapping[str, TraceResult], traces: Iterable[str]) -> int:
        """Traces ``traces`` now have ``results``'s turns; the first position changed."""
        first = len(self.turns)
        for tid in results if not self._rank else traces:
            first = min(first, self._put(tid, results.get(tid)))
        return first

    def _put(self, tid: str, result: TraceResult | None) -> int:
        rank = self._rank.setdefault(tid, len(self._rank))
        old = self._of.get(tid, [])
        new = result.turns if result is not None else []
        first = len(self.turns)
        if old is not new:
            for i, turn in enumerate(old):
                at = bisect.bisect_left(self.keys, (turn.start, turn.anchor, rank, i))
                del self.keys[at], self.turns[at]
                first = min(first, at)
                self._count(turn, -1)
            for i, turn in enumerate(new):
                key = (turn.start, turn.anchor, rank, i)
                at = bisect.bisect_right(self.keys, key)
                self.keys.insert(at, key)
                self.turns.insert(at, turn)
                first = min(first, at)
                self._count(turn, 1)
            self._of[tid] = new
        self._session(tid, result.session if result is not None else [None] * len(self._best))
        return first

    def _count(self, turn: Turn, sign: int) -> None:
        self.tokens[0] += sign * turn.tokens[0]
        self.tokens[1] += sign * turn.tokens[1]
        self.content += sign * bool(turn.content)
        self.roots += sign * (turn.anchor_kind == "root")

    def _session(self, tid: str, hits: list[SessionHit | None]) -> None:
        """The earliest hit of each session source, over the traces in rank order."""
        old = self._hits.get(tid, [None] * len(hits))
        self._hits[tid] = list(hits)
        for i, (was, now) in enumerate(zip(old, hits, strict=True)):
            if was == now:
                continue
            best = self._best[i]
            if best is not None and best[1] == tid and (now is None or _at(now) > _at(was)):
                self._best[i] = self._earliest(i)  # the best got worse: look again
            elif now is not None and (best is None or _at(now) < _at(best[0])):
                self._best[i] = (now, tid)
            elif now is not None and best is not None and _at(now) == _at(best[0]):
                self._best[i] = self._earliest(i)  # a tie: the first trace in rank wins

    def _earliest(self, i: int) -> tuple[SessionHit, str] | None:
        found = [(h[i], tid) for tid, h in self._hits.items() if h[i] is not None]
        found.sort(key=lambda f: (_at(f[0]), self._rank[f[1]]))
        return (found[0][0], found[0][1]) if found else None  # type: ignore[return-value]

    def joined(self, first: int) -> tuple[list[Turn], int]:
        """The turns as the state shows them, and the first position that may differ."""
        if self.roots == 0:
            return self.turns, first
        return join_turns(self.turns), 0

    def session_key(self) -> dict[str, Any] | None:
        """As :func:`~replay_tui.reducers.otel_turns.session_key` says it."""
        for i, best in enumerate(self._best):
            found = session_found(i, *best) if best is not None else None
            if found is not None:
                return found
        return None


def _at(hit: SessionHit | None) -> tuple[int, int]:
    assert hit is not None
    return hit[0], hit[1]
