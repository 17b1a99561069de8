"""Every trace's turns in one order, kept as traces change, at the cost of the change.

After each record only that record's trace is derived again; what the
state shows across traces (the turns in order of their start, joined where
one continues another, the token totals, the session key) was then built
again from every trace, so a file's time grew with the square of its turns.
:class:`TurnOrder` keeps the turns sorted (start, anchor span, the trace's
first-seen rank: what a stable sort of the traces in that rank gives; an
anchor is one span of its trace) and moves only the turns that changed; it
keeps the totals and, per session source, the earliest hit as the traces
change, and says from which position the ordered turns differ, so the
state is written from there on only. Joining continuations (provider-only
telemetry, root-anchored turns) reads neighbours: with any root-anchored
turn the whole list is joined again, as before.
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from replay_tui.reducers import pricing
from replay_tui.reducers.otel_genai.spans import SESSION_SOURCES
from replay_tui.reducers.otel_genai.tools import copies, fill_from_parts
from replay_tui.reducers.otel_genai.turns import SessionHit, TraceResult, Turn, tokens_sum

_Key = tuple[int, str, int]
#: What each turn cost, and the turn as the state shows it with its cost,
#: kept with the turn (a changed turn is a new object).
_SPENT: weakref.WeakKeyDictionary[Turn, tuple[pricing.Spent, dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _priced(turn: Turn) -> tuple[pricing.Spent, dict[str, Any]]:
    found = _SPENT.get(turn)
    if found is None:
        spent = pricing.spent(
            (
                c.model,
                None,
                _tokens(c.usage),
                c.start / 1e9 if c.start > 0 else None,
            )
            for c in turn.calls
            if c.usage
        )
        found = _SPENT[turn] = (spent, turn.public | {"cost": spent.public()})
    return found


def _tokens(usage: list[int]) -> pricing.Tokens:
    """A call's ``[input, output, cache read, cache write]`` (the input
    holding the cache's) as priced: each token at its own rate."""
    inp, out, read, write = usage
    return pricing.Tokens(
        input=max(0, inp - read - write), output=out, cache_read=read, cache_write=write
    )


def turn_cost(turn: Turn) -> pricing.Spent:
    """What ``turn``'s model calls cost, each at its start."""
    return _priced(turn)[0]


def priced(turn: Turn) -> dict[str, Any]:
    """The turn as the state shows it, with its ``cost`` (``usd``, ``unpriced``)."""
    return _priced(turn)[1]


class TurnOrder:
    """The turns of every trace in order (see the module)."""

    def __init__(self) -> None:
        self.keys: list[_Key] = []
        self.turns: list[Turn] = []
        self._of: dict[str, list[Turn]] = {}
        self._results: dict[str, TraceResult] = {}
        self._rank: dict[str, int] = {}
        self._hits: dict[str, list[SessionHit | None]] = {}
        self._best: list[tuple[SessionHit, str] | None] = [None] * len(SESSION_SOURCES)
        self.roots = 0
        self.tokens = [0, 0, 0, 0]
        self.content = 0
        self.cost = pricing.Running()

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
            before = self._results.get(tid)
            if result is not None and before is not None and result.since is before:
                gone, added = result.change  # one record's change: one turn, at most
            else:
                now, was = {id(t) for t in new}, {id(t) for t in old}
                gone = [t for t in old if id(t) not in now]
                added = [t for t in new if id(t) not in was]
            for turn in gone:
                at = bisect.bisect_left(self.keys, (turn.start, turn.anchor, rank))
                del self.keys[at], self.turns[at]
                first = min(first, at)
                self._count(turn, -1)
            for turn in added:
                key = (turn.start, turn.anchor, rank)
                at = bisect.bisect_right(self.keys, key)
                self.keys.insert(at, key)
                self.turns.insert(at, turn)
                first = min(first, at)
                self._count(turn, 1)
            self._of[tid] = new
        if result is not None:
            self._results[tid] = result
        else:
            self._results.pop(tid, None)
        self._session(tid, result.session if result is not None else [None] * len(self._best))
        return first

    def _count(self, turn: Turn, sign: int) -> None:
        for i, n in enumerate(turn.tokens):
            self.tokens[i] += sign * n
        self.content += sign * bool(turn.content)
        self.cost.add(turn_cost(turn), sign)
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
        """As :func:`session_key` says it."""
        for i, best in enumerate(self._best):
            found = session_found(i, *best) if best is not None else None
            if found is not None:
                return found
        return None


def _at(hit: SessionHit | None) -> tuple[int, int]:
    assert hit is not None
    return hit[0], hit[1]


# -- across traces ------------------------------------------------------------------
def assemble(results: Mapping[str, TraceResult]) -> list[Turn]:
    """Every trace's turns by (start, anchor span), continuations joined."""
    turns = sorted(
        (t for r in results.values() for t in r.turns), key=lambda t: (t.start, t.anchor)
    )
    return join_turns(turns)


def join_turns(turns: list[Turn]) -> list[Turn]:
    """Turns in order, each joined to the one before it that it continues."""
    out: list[Turn] = []
    for t in turns:
        if out and _continues(out[-1], t):
            out[-1] = _merge(out[-1], t)
        else:
            out.append(t)
    return out


def _continues(prev: Turn, t: Turn) -> bool:
    """A root-anchored turn whose first call's input ends with a tool
    response, right after a turn whose last call requested tools (provider-
    only telemetry putting each model call of a tool round in its own trace)."""
    if t.anchor_kind != "root" or not t.calls or not prev.calls:
        return False
    fc = t.calls[0]
    lc = max(prev.calls, key=lambda c: (c.end, c.start))
    requested = lc.out["calls"] if lc.out else []
    if fc.inp is None or not fc.inp["ends_tool"] or not requested:
        return False
    req_ids = {r["id"] for r in requested if r["id"]}
    answered = {r["id"] for r in fc.inp["responses"] if r["id"]}
    return not (req_ids and answered) or bool(req_ids & answered)


def _merge(a: Turn, b: Turn) -> Turn:
    calls = sorted(a.calls + b.calls, key=lambda c: (c.start, c.end))
    tools = fill_from_parts(copies(t for t in a.tools + b.tools if t.from_span), calls)
    final: str | None
    if b.final_text is not None:
        inter = a.intermediate_texts + ([a.final_text] if a.final_text else [])
        inter += b.intermediate_texts
        final = b.final_text
    else:
        inter, final = a.intermediate_texts + b.intermediate_texts, a.final_text
    status = "running" if "running" in (a.status, b.status) else b.status
    turn = Turn(
        trace=a.trace,
        anchor=a.anchor,
        anchor_name=a.anchor_name,
        anchor_kind=a.anchor_kind,
        start=a.start,
        status=status,
        user_text=a.user_text or b.user_text,
        final_text=final,
        intermediate_texts=inter,
        agents=sorted(set(a.agents) | set(b.agents)),
        tools=tools,
        calls=calls,
        tokens=tokens_sum([a.tokens, b.tokens]),
        content=a.content or b.content,
        conversation_id=a.conversation_id or b.conversation_id,
    )
    turn.make_public()
    turn.public["continued_in"] = [b.trace, *b.public.get("continued_in", [])]
    return turn


def session_key(results: Mapping[str, TraceResult]) -> dict[str, Any] | None:
    """The first source with a hit wins: resource ``agentevals.session_name``,
    then ``gen_ai.conversation.id`` (span, then resource), then ``session.id``;
    within a source, the earliest span by (start, file position)."""
    for i in range(len(SESSION_SOURCES)):
        hits = [(*hit, tid) for tid, r in results.items() if (hit := r.session[i]) is not None]
        if not hits:
            continue
        start, copy, value, sid, tid = min(hits, key=lambda h: (h[0], h[1]))
        found = session_found(i, (start, copy, value, sid), tid)
        if found is not None:
            return found
    return None


def session_found(i: int, hit: SessionHit, tid: str) -> dict[str, Any] | None:
    """The session key that source ``i``'s earliest hit says (None: its value is empty)."""
    kind, attr, on_res = SESSION_SOURCES[i]
    _, _, value, sid = hit
    if not value:
        return None
    return {
        "kind": kind,
        "value": str(value),
        "span": sid,
        "trace": tid,
        "field": f"{'resource ' if on_res else ''}{attr}",
    }
