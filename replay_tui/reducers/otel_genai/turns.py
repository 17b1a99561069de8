"""Deriving turns from the store of spans (design.md §4.3-§4.9).

:func:`derive_trace` is a pure function of one trace's store (and the logs
with no trace id that name its spans): turns never cross traces except through
the continuation join and the session key, which
:mod:`~replay_tui.reducers.otel_genai.order` does over every trace's turns. So a
record costs its own trace.

Within a trace, a record costs its own turn: what deriving it last built
(the forest, kinds, each span's place, the turn groups) is kept, and a
record that cannot change the forest's shape (a span's end or event, a log
tied to a span, a new span that no other names as its parent and that does
not change its parent's kind) derives only the turn it is in. Any other
derives the trace whole (:func:`_follow`). Deriving a trace whole after
every record made one trace of 2,000 spans take 160 s.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay_tui.reducers.otel_genai.answers import answer_texts, not_captured
from replay_tui.reducers.otel_genai.messages import Summary, first
from replay_tui.reducers.otel_genai.spans import (
    AGENT,
    AGENTIC,
    INFERENCE,
    SESSION_SOURCES,
    TOOL,
    WORKFLOW,
    Fact,
    classify,
    effective_parents,
    pick_call,
)
from replay_tui.reducers.otel_genai.tools import (
    Call,
    Info,
    Reuse,
    ToolCall,
    View,
    chains_of,
    fill_from_parts,
    span_tools,
)

#: Per :data:`SESSION_SOURCES`: (start, copy, value, span id) of the earliest span offering it.
SessionHit = tuple[int, int, Any, str]


def tokens_sum(usages: Iterable[Sequence[int]]) -> tuple[int, int, int, int]:
    """The sum of calls' ``[input, output, cache read, cache write]``."""
    total = [0, 0, 0, 0]
    for found in usages:
        for i, n in enumerate(found):
            total[i] += n
    return total[0], total[1], total[2], total[3]


def token_counts(tokens: Sequence[int]) -> dict[str, int]:
    """Tokens as the state says them."""
    inp, out, read, write = tokens
    return {"input": inp, "output": out, "cache_read": read, "cache_write": write}


@dataclass(eq=False)
class Turn:
    trace: str
    anchor: str
    anchor_name: str
    anchor_kind: str  # agent | workflow | root
    start: int
    status: str  # running | done | failed
    user_text: str | None
    final_text: str | None
    intermediate_texts: list[str]
    agents: list[str]
    tools: list[ToolCall]
    calls: list[Call]
    #: input (the cache's included), output, cache read, cache write
    tokens: tuple[int, int, int, int]
    content: bool
    conversation_id: Any
    public: dict[str, Any] = field(default_factory=dict)

    def make_public(self) -> None:
        self.public = {
            "trace": self.trace,
            "anchor": {"span": self.anchor, "name": self.anchor_name, "kind": self.anchor_kind},
            "status": self.status,
            "user_text": self.user_text,
            "final_text": self.final_text,
            "intermediate_texts": list(self.intermediate_texts),
            "agents": list(self.agents),
            "tool_calls": [t.public() for t in self.tools],
            "tokens": token_counts(self.tokens),
            "llm_calls": len(self.calls),
            "conversation": self.conversation_id,
        }


@dataclass(eq=False)
class TraceResult:
    """What one trace contributes: its turns, its session hits, what to warn of."""

    turns: list[Turn]
    session: list[SessionHit | None]
    warnings: list[str]
    #: Its logs tied to no model call (no span id, and it could be either of two).
    unattributed: list[dict[str, Any]] = field(default_factory=list)
    #: Derived from ``since`` by one record's change: the turns it took out
    #: and put in (the others are the very same objects).
    since: TraceResult | None = None
    change: tuple[list[Turn], list[Turn]] = ([], [])


#: What a span passes to its children in the walk (design.md §4.3): covered,
#: inference parent, agent, under a tool, tool parent.
Down = tuple[bool, str | None, str | None, bool, str | None]
ROOT_DOWN: Down = (False, None, None, False, None)
#: A record a derivation may follow by its change only: (kind, span id, the
#: kept log fact for a ``log``).
Touched = tuple[str, str, dict[str, Any] | None]


@dataclass(eq=False)
class _Tree:
    """One trace's repaired forest, kinds, views and turns, as its last
    derivation left them (kept in the trace's :class:`Reuse` to derive the
    next record by its change: :func:`_follow`)."""

    facts: dict[str, Fact]
    children: dict[str | None, list[str]]
    views: dict[str, View]
    kind: dict[str, str]
    reuse: Reuse
    info: dict[str, Info] = field(default_factory=dict)
    base: dict[str, str] = field(default_factory=dict)
    logs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    down: dict[str, Down] = field(default_factory=dict)
    #: Turn groups (an uncovered agentic anchor, or a tree's root) -> their
    #: spans, parents before children; each span's group.
    groups: dict[str, list[str]] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)
    anchors: set[str] = field(default_factory=set)
    #: The groups' turns (a group may be none) and the warnings deriving them gave.
    turns: dict[str, Turn] = field(default_factory=dict)
    said: dict[str, list[str]] = field(default_factory=dict)
    loop_warnings: list[str] = field(default_factory=list)
    session: list[SessionHit | None] = field(default_factory=list)
    #: Logs not tied to a span of the trace (routed by time): a new span may take them.
    loose: int = 0
    #: Of those, the ones that could be either of two model calls (or none).
    unattributed: list[dict[str, Any]] = field(default_factory=list)
    #: Parent ids that spans name and the trace does not hold (yet).
    waiting: set[str] = field(default_factory=set)
    #: What it gave last, and the turns the record being followed took out and put in.
    result: TraceResult | None = None
    change: tuple[list[Turn], list[Turn]] = ([], [])
    #: Groups whose turn is not built again yet (``defer``), each with the
    #: turn the last result holds for it.
    pending: dict[str, Turn | None] = field(default_factory=dict)


def derive_trace(
    tid: str,
    trace: Mapping[str, Any],
    extra_logs: list[dict[str, Any]],
    reuse: Reuse | None = None,
    touched: Touched | None = None,
    defer: bool = False,
) -> TraceResult:
    """The turns of one trace: a pure function of its store. ``reuse`` only
    saves building again what did not change: given the record that changed
    the store (``touched``), only the turn it is in is derived again when the
    forest's shape cannot have changed otherwise (:func:`_follow`); else the
    whole trace is.

    With ``defer``, a turn whose anchor span has not ended is not built
    again yet (its result keeps the turn as it was) until :func:`settle_trace`:
    such a turn can give no warning (each needs its anchor ended), so the
    warnings are those of deriving it now, at the same record."""
    reuse = reuse if reuse is not None else Reuse()
    last = reuse.derived
    if isinstance(last, _Tree) and touched is not None and not extra_logs:
        last.change = ([], [])
        if _follow(tid, trace, last, touched, defer):
            return _next_result(last)
    tree = _derive_all(tid, trace, extra_logs, reuse)
    reuse.derived = tree
    tree.result = _result(tree)
    return tree.result


def has_pending(reuse: Reuse) -> bool:
    """Whether a turn of the trace is left to build (``defer``)."""
    last = reuse.derived
    return isinstance(last, _Tree) and bool(last.pending)


def settle_trace(tid: str, reuse: Reuse) -> TraceResult | None:
    """Build the turns ``defer`` left; the trace's new result (None: none was left)."""
    last = reuse.derived
    if not isinstance(last, _Tree) or not last.pending:
        return None
    last.change = ([], [])
    for group in list(last.pending):
        _turn_again(tid, last, group)
    return _next_result(last)


def _next_result(tree: _Tree) -> TraceResult:
    """The tree's result after a change it followed (``tree.change``): the
    very result before it if the change left every turn as it was (a turn
    left to build: ``defer``)."""
    before = tree.result
    result = _result(tree, before)
    if (
        before is not None
        and tree.change == ([], [])
        and result.session == before.session
        and result.warnings == before.warnings
        and result.unattributed == before.unattributed
    ):
        return before
    result.since, result.change = before, tree.change
    if before is not None:
        before.since = None  # one link back, never a chain of every result
    tree.result = result
    return result


def _result(tree: _Tree, before: TraceResult | None = None) -> TraceResult:
    """What ``tree`` gives; from ``before`` and the tree's change, if given
    (the turns in another order then: only their set counts)."""
    if before is None:
        turns = list(tree.turns.values())
    else:
        gone, added = tree.change
        turns = list(before.turns)
        for turn in gone:
            turns.remove(turn)
        turns += added
    warnings = [*tree.loop_warnings, *(w for said in tree.said.values() for w in said)]
    return TraceResult(
        turns=turns,
        session=list(tree.session),
        warnings=warnings,
        unattributed=list(tree.unattributed),
    )


def _derive_all(
    tid: str, trace: Mapping[str, Any], extra_logs: list[dict[str, Any]], reuse: Reuse
) -> _Tree:
    """The whole trace, afresh (what a record that may reshape it costs)."""
    reuse.begin()
    entries: Mapping[str, Any] = trace["spans"]
    facts = {sid: e["fact"] for sid, e in entries.items() if e["fact"] is not None}
    parent, broken = effective_parents(facts)
    children: dict[str | None, list[str]] = {}
    for sid in sorted(facts, key=lambda s: _place(facts[s], s)):
        children.setdefault(parent[sid], []).append(sid)
    base = {sid: classify(f) for sid, f in facts.items()}
    kind = {
        sid: classify(f, frozenset(base[c] for c in children.get(sid, [])))
        for sid, f in facts.items()
    }
    all_logs = [*trace["logs"], *extra_logs]
    logs, unattributed = _logs_by_span(facts, kind, all_logs)
    views = {sid: reuse.view(sid, entries[sid], logs.get(sid, [])) for sid in facts}
    tree = _Tree(facts, children, views, kind, reuse, base=base, logs=logs)
    tree.unattributed = unattributed
    tree.loop_warnings = [
        f"parent loop broken at span {s} (earliest start becomes root)" for s in broken
    ]
    tree.loose = sum(1 for lg in all_logs if (lg.get("to") or lg["span"]) not in facts)
    tree.waiting = {f["parent"] for f in facts.values() if f["parent"] not in facts}
    _walk(tree)
    info = tree.info
    tree.anchors = {k for k in facts if kind[k] in AGENTIC and k in info and not info[k].covered}
    tree.groups = _members(tree, tree.anchors)
    tree.owner = {k: group for group, mem in tree.groups.items() for k in mem}
    for group, mem in tree.groups.items():
        turn, said = _group_turn(tid, group, mem, tree)
        if turn is not None:
            tree.turns[group] = turn
        if said:
            tree.said[group] = said
    tree.session = _session_hits(facts)
    return tree


def _place(fact: Fact, sid: str) -> tuple[Any, Any, str]:
    """A span's place among its siblings."""
    return fact["start"], fact["copy"], sid


def _follow(
    tid: str, trace: Mapping[str, Any], tree: _Tree, touched: Touched, defer: bool = False
) -> bool:
    """Derive the change ``touched`` made by its turn only, if the forest's
    shape, kinds and the routing of logs cannot have changed; False: the
    trace must be derived whole. (Exactness: tests/reducers/test_otel_rules.py
    compares this with deriving every trace afresh after every record.)"""
    kind, sid, log = touched
    entries: Mapping[str, Any] = trace["spans"]
    entry = entries.get(sid)
    fact = entry["fact"] if entry is not None else None
    if kind == "log":
        assert log is not None
        target = log.get("to") or log["span"]
        if target not in tree.facts:
            return False  # routed by time: another span may take it
        had = tree.logs.get(target, [])
        at = bisect.bisect_left(had, log["copy"], key=lambda lg: lg["copy"])
        tree.logs[target] = [*had[:at], log, *had[at:]]  # a new list: views compare them
        grown = (had, log) if at == len(had) else None
        return _again(tid, tree, entries, target, grown, defer)
    if sid in tree.facts:
        if fact != tree.facts[sid]:
            return False  # an earlier copy's start: the span is another
        return _again(tid, tree, entries, sid, None, defer)
    if fact is None:
        return True  # records of a span not started: nothing derived reads them
    if kind != "span_start" or tree.loose or sid in tree.waiting:
        return False
    return _grow(tid, tree, entries, sid, fact, defer)


def _again(
    tid: str,
    tree: _Tree,
    entries: Mapping[str, Any],
    sid: str,
    grown: tuple[list[dict[str, Any]], dict[str, Any]] | None = None,
    defer: bool = False,
) -> bool:
    """Span ``sid``'s view changed (by a log after its others: ``grown``):
    its turn is derived again."""
    _alias(tree.reuse)
    tree.views[sid] = tree.reuse.view(sid, entries[sid], tree.logs.get(sid, []), grown)
    _turn_again(tid, tree, tree.owner[sid], defer)
    return True


def _turn_again(tid: str, tree: _Tree, group: str, defer: bool = False) -> None:
    """Build ``group``'s turn again (with ``defer``, later if its anchor is open)."""
    if defer and not tree.views[group].ended:
        if group not in tree.pending:
            tree.pending[group] = tree.turns.get(group)
        return
    if group in tree.pending:
        had = tree.pending.pop(group)
        tree.turns.pop(group, None)
    else:
        had = tree.turns.pop(group, None)
    tree.said.pop(group, None)
    turn, said = _group_turn(tid, group, tree.groups[group], tree)
    if turn is not None:
        tree.turns[group] = turn
    if said:
        tree.said[group] = said
    gone, added = tree.change
    if had is not None:
        gone = [*gone, had]
    if turn is not None:
        added = [*added, turn]
    tree.change = (gone, added)


def _alias(reuse: Reuse) -> None:
    """What was built stays to be taken again, and what is built joins it."""
    reuse.old_views, reuse.old_calls, reuse.old_tools = reuse.views, reuse.calls, reuse.tools


def _grow(
    tid: str, tree: _Tree, entries: Mapping[str, Any], sid: str, fact: Fact, defer: bool = False
) -> bool:
    """A new span no other span names as its parent: a leaf (or a root).
    False if it changes its parent's kind (the forest is derived whole)."""
    pid = fact["parent"]
    up = pid if pid and pid in tree.facts and pid != sid else None
    base = classify(fact)
    if up is not None:
        siblings = tree.children.get(up, [])
        kinds = frozenset([*(tree.base[c] for c in siblings), base])
        if classify(tree.facts[up], kinds) != tree.kind[up]:
            return False
    else:
        tree.waiting.add(pid)
    tree.facts[sid] = fact
    tree.base[sid] = base
    tree.kind[sid] = classify(fact, frozenset())
    row = tree.children.setdefault(up, [])
    facts = tree.facts
    row.insert(bisect.bisect_right(row, _place(fact, sid), key=lambda c: _place(facts[c], c)), sid)
    _alias(tree.reuse)
    tree.views[sid] = tree.reuse.view(sid, entries[sid], [])
    _visit(tree, sid, tree.down[up] if up is not None else ROOT_DOWN)
    if tree.kind[sid] in AGENTIC and not tree.info[sid].covered:
        tree.anchors.add(sid)
        group = sid
    else:
        group = tree.owner[up] if up is not None else sid
    tree.owner[sid] = group
    tree.groups[group] = _group_members(tree, group)
    _turn_again(tid, tree, group, defer)
    for i, value in enumerate(fact.get("session") or ()):
        hit = (fact["start"], fact["copy"], value, sid)
        now = tree.session[i]
        if value is not None and (now is None or hit[:2] < now[:2]):
            tree.session[i] = hit
    return True


def _logs_by_span(
    facts: Mapping[str, Fact], kind: Mapping[str, str], logs: list[dict[str, Any]]
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Logs tied to a span go to it; the others to the only model call of
    the trace, else to the one whose time range holds them (:func:`pick_call`).
    A log that could be either of two calls, or none, is not merged into
    any: it is returned as unattributed."""
    out: dict[str, list[dict[str, Any]]] = {}
    loose: list[dict[str, Any]] = []
    cands = [(s, facts[s]["start"], facts[s]["end"]) for s in facts if kind[s] == INFERENCE]
    for lg in logs:
        target = lg.get("to") or lg["span"]
        if not (target and target in facts):
            target = pick_call(cands, lg["time"])
        if target is None:
            loose.append(lg)
        else:
            out.setdefault(target, []).append(lg)
    return out, loose


def _walk(tree: _Tree) -> None:
    """Each tree once from its root: coverage, inference and tool parents, agent."""
    stack = [(r, ROOT_DOWN) for r in reversed(tree.children.get(None, []))]
    while stack:
        k, down = stack.pop()
        passed = _visit(tree, k, down)
        stack.extend((c, passed) for c in reversed(tree.children.get(k, [])))


def _visit(tree: _Tree, k: str, down: Down) -> Down:
    """Span ``k``'s place given what its parent passes down; what it passes on."""
    covered, inf_parent, agent, under_tool, tool_parent = down
    kd = tree.kind[k]
    fact = tree.facts[k]
    own = fact.get("agent")
    if kd == AGENT and not own:
        name = fact["name"]
        own = name.split(" ", 1)[1] if " " in name else None
    if kd in AGENTIC and own:
        agent = own
    tree.info[k] = Info(
        covered=covered,
        inf_parent=inf_parent,
        tool_parent=tool_parent,
        under_tool=under_tool,
        agent=agent or (own if kd in (INFERENCE, TOOL) else None),
        own_agent=own,
    )
    breaks = kd in (AGENT, WORKFLOW, TOOL)
    c_inf = k if kd == INFERENCE else (None if breaks else inf_parent)
    c_tool = k if kd == TOOL else (None if kd in (AGENT, WORKFLOW, INFERENCE) else tool_parent)
    passed = (covered or breaks, c_inf, agent, under_tool or kd == TOOL, c_tool)
    tree.down[k] = passed
    return passed


def _members(tree: _Tree, anchors: set[str]) -> dict[str, list[str]]:
    """Anchor -> the spans below it not below another anchor (a tree no
    agentic anchor covers belongs to its root), parents before children."""
    members: dict[str, list[str]] = {}
    for root in tree.children.get(None, []):
        stack: list[tuple[str, str]] = [(root, root)]
        while stack:
            k, cur = stack.pop()
            if k in anchors:
                cur = k
            members.setdefault(cur, []).append(k)
            stack.extend((c, cur) for c in reversed(tree.children.get(k, [])))
    return members


def _group_members(tree: _Tree, group: str) -> list[str]:
    """The spans of one group, as :func:`_members` lists them."""
    found: list[str] = []
    stack = [group]
    while stack:
        k = stack.pop()
        found.append(k)
        stack.extend(c for c in reversed(tree.children.get(k, [])) if c not in tree.anchors)
    return found


def _group_turn(
    tid: str, anchor: str, mem: list[str], tree: _Tree
) -> tuple[Turn | None, list[str]]:
    """One group's turn (None: it is none) and the warnings deriving it gave."""
    kind, views = tree.kind, tree.views
    said: list[str] = []
    kinds = {kind[m] for m in mem}
    av = views[anchor]
    agentic = kind[anchor] in AGENTIC
    a_in, a_out = av.messages() if agentic else (None, None)
    if anchor in tree.anchors:
        failed = av.failed or (av.ended and av.fact.get("error_type") is not None)
        has_inside = INFERENCE in kinds or TOOL in kinds or a_in or a_out or failed
        if not has_inside and av.ended:
            said.append(f"agent span {anchor} has no model call, tool or message: not a turn")
            return None, said
    elif INFERENCE not in kinds:
        return None, said
    return _build_turn(tid, anchor, mem, tree, a_in, a_out, said), said


def _build_turn(
    tid: str,
    anchor: str,
    mem: list[str],
    tree: _Tree,
    a_in: Summary | None,
    a_out: Summary | None,
    warnings: list[str],
) -> Turn:
    kind, info, views, facts = tree.kind, tree.info, tree.views, tree.facts
    calls = [tree.reuse.call(chain, views, info) for chain in chains_of(mem, kind, info)]
    calls.sort(key=lambda c: (c.start, c.end))
    av = views[anchor]
    tools = fill_from_parts(
        span_tools(mem, kind, info, views, tree.reuse), calls, warnings if av.ended else None
    )
    user_text, final_text, inter = answer_texts(calls, a_in, a_out)
    agents: set[str] = set()
    for k in mem:
        own = info[k].own_agent
        if kind[k] in AGENTIC and own:
            agents.add(own)
    agents |= {c.agent for c in calls if c.agent}
    agents |= {t.agent for t in tools if t.agent}
    summaries = [a_in, a_out, *(s for c in calls for s in (c.inp, c.out))]
    said = any(s is not None and s.get("captured", True) for s in summaries)
    if calls and not said:
        not_captured(tools)
    content = said or any(t.args is not None or t.result is not None for t in tools)
    failed = av.failed or (av.ended and av.fact.get("error_type") is not None)
    turn = Turn(
        trace=tid,
        anchor=anchor,
        anchor_name=av.fact["name"],
        anchor_kind=kind[anchor] if kind[anchor] in AGENTIC else "root",
        start=min(facts[k]["start"] for k in mem),
        status="running" if not av.ended else ("failed" if failed else "done"),
        user_text=user_text,
        final_text=final_text,
        intermediate_texts=inter,
        agents=sorted(agents),
        tools=tools,
        calls=calls,
        tokens=tokens_sum(c.usage for c in calls if c.usage),
        content=content,
        conversation_id=first(facts[k].get("conv") for k in mem),
    )
    turn.make_public()
    return turn


def _session_hits(facts: Mapping[str, Fact]) -> list[SessionHit | None]:
    hits: list[SessionHit | None] = [None] * len(SESSION_SOURCES)
    for sid, f in facts.items():
        for i, value in enumerate(f.get("session") or ()):
            if value is None:
                continue
            hit = (f["start"], f["copy"], value, sid)
            cur = hits[i]
            if cur is None or hit[:2] < cur[:2]:
                hits[i] = hit
    return hits
