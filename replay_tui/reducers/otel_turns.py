"""Deriving turns from the store of spans (design.md §4.3-§4.9).

:func:`derive_trace` is a pure function of one trace's store (and the logs
with no trace id that name its spans): turns never cross traces except through
the continuation join and the session key, which :func:`assemble` does over
every trace's turns. So a record costs the re-derivation of its own trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from replay_tui.reducers.otel_messages import first
from replay_tui.reducers.otel_spans import (
    AGENT,
    AGENTIC,
    INFERENCE,
    SESSION_SOURCES,
    TOOL,
    WORKFLOW,
    Fact,
    classify,
    effective_parents,
)
from replay_tui.reducers.otel_tools import (
    Call,
    Info,
    Reuse,
    ToolCall,
    View,
    chains_of,
    copies,
    fill_from_parts,
    span_tools,
)

Summary = dict[str, Any]
#: Per :data:`SESSION_SOURCES`: (start, copy, value, span id) of the earliest span offering it.
SessionHit = tuple[int, int, Any, str]


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
    tokens: tuple[int, int]
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
            "tokens": {"input": self.tokens[0], "output": self.tokens[1]},
            "llm_calls": len(self.calls),
            "conversation": self.conversation_id,
        }


@dataclass(eq=False)
class TraceResult:
    """What one trace contributes: its turns, its session hits, what to warn of."""

    turns: list[Turn]
    session: list[SessionHit | None]
    warnings: list[str]


@dataclass(eq=False)
class _Tree:
    """One trace's repaired forest, kinds and views."""

    facts: dict[str, Fact]
    children: dict[str | None, list[str]]
    views: dict[str, View]
    kind: dict[str, str]
    reuse: Reuse
    info: dict[str, Info] = field(default_factory=dict)


def derive_trace(
    tid: str,
    trace: Mapping[str, Any],
    extra_logs: list[dict[str, Any]],
    reuse: Reuse | None = None,
) -> TraceResult:
    """The turns of one trace: a pure function of its store (``reuse`` only
    saves building again what did not change)."""
    reuse = reuse if reuse is not None else Reuse()
    reuse.begin()
    entries: Mapping[str, Any] = trace["spans"]
    facts = {sid: e["fact"] for sid, e in entries.items() if e["fact"] is not None}
    parent, broken = effective_parents(facts)
    warnings = [f"parent loop broken at span {s} (earliest start becomes root)" for s in broken]
    children: dict[str | None, list[str]] = {}
    for sid in sorted(facts, key=lambda s: (facts[s]["start"], facts[s]["copy"], s)):
        children.setdefault(parent[sid], []).append(sid)
    base = {sid: classify(f) for sid, f in facts.items()}
    kind = {
        sid: classify(f, frozenset(base[c] for c in children.get(sid, [])))
        for sid, f in facts.items()
    }
    logs = _logs_by_span(facts, kind, [*trace["logs"], *extra_logs])
    views = {sid: reuse.view(sid, entries[sid], logs.get(sid, [])) for sid in facts}
    tree = _Tree(facts, children, views, kind, reuse)
    _walk(tree)
    turns = _turns(tid, tree, warnings)
    return TraceResult(turns=turns, session=_session_hits(facts), warnings=warnings)


def _logs_by_span(
    facts: Mapping[str, Fact], kind: Mapping[str, str], logs: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Logs tied to a span go to it; the others to the only inference span
    of the trace, else to the innermost one whose time range holds them."""
    out: dict[str, list[dict[str, Any]]] = {}
    for lg in logs:
        target = lg.get("to") or lg["span"]
        if target and target in facts:
            out.setdefault(target, []).append(lg)
            continue
        cands = [s for s in facts if kind[s] == INFERENCE]
        if len(cands) > 1:
            t = lg["time"]
            cands = [s for s in cands if facts[s]["start"] <= t <= facts[s]["end"]]
            cands.sort(key=lambda s: facts[s]["start"], reverse=True)
        if cands:
            out.setdefault(cands[0], []).append(lg)
    return out


def _walk(tree: _Tree) -> None:
    """Each tree once from its root: coverage, inference and tool parents, agent."""
    facts, kind, info = tree.facts, tree.kind, tree.info
    stack: list[tuple[str, bool, str | None, str | None, bool, str | None]] = [
        (r, False, None, None, False, None) for r in reversed(tree.children.get(None, []))
    ]
    while stack:
        k, covered, inf_parent, agent, under_tool, tool_parent = stack.pop()
        kd = kind[k]
        own = facts[k].get("agent")
        if kd == AGENT and not own:
            name = facts[k]["name"]
            own = name.split(" ", 1)[1] if " " in name else None
        if kd in AGENTIC and own:
            agent = own
        info[k] = Info(
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
        for c in reversed(tree.children.get(k, [])):
            stack.append((c, covered or breaks, c_inf, agent, under_tool or kd == TOOL, c_tool))


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


def _turns(tid: str, tree: _Tree, warnings: list[str]) -> list[Turn]:
    kind, info, views = tree.kind, tree.info, tree.views
    anchors = {k for k in tree.facts if kind[k] in AGENTIC and k in info and not info[k].covered}
    turns: list[Turn] = []
    for anchor, mem in _members(tree, anchors).items():
        kinds = {kind[m] for m in mem}
        av = views[anchor]
        agentic = kind[anchor] in AGENTIC
        a_in, a_out = av.messages() if agentic else (None, None)
        if anchor in anchors:
            failed = av.failed or (av.ended and av.fact.get("error_type") is not None)
            has_inside = INFERENCE in kinds or TOOL in kinds or a_in or a_out or failed
            if not has_inside and av.ended:
                warnings.append(
                    f"agent span {anchor} has no model call, tool or message: not a turn"
                )
                continue
        elif INFERENCE not in kinds:
            continue
        turns.append(_build_turn(tid, anchor, mem, tree, a_in, a_out, warnings))
    return turns


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
    user_text, final_text, inter = _texts(calls, a_in, a_out)
    agents: set[str] = set()
    for k in mem:
        own = info[k].own_agent
        if kind[k] in AGENTIC and own:
            agents.add(own)
    agents |= {c.agent for c in calls if c.agent}
    agents |= {t.agent for t in tools if t.agent}
    content = (
        a_in is not None
        or a_out is not None
        or any(c.inp is not None or c.out is not None for c in calls)
        or any(t.args is not None or t.result is not None for t in tools)
    )
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
        tokens=(
            sum(c.usage[0] for c in calls if c.usage),
            sum(c.usage[1] for c in calls if c.usage),
        ),
        content=content,
        conversation_id=first(facts[k].get("conv") for k in mem),
    )
    turn.make_public()
    return turn


def _texts(
    calls: list[Call], a_in: Summary | None, a_out: Summary | None
) -> tuple[str | None, str | None, list[str]]:
    """user_text, final_text and intermediate_texts (design.md §4.6)."""
    own = [c for c in calls if not c.delegated] or calls
    if a_in is not None:
        user_text = a_in["user"] or a_in["text"]
    else:
        fc = next((c for c in calls if c.inp is not None), None)
        user_text = fc.inp["user"] if fc is not None and fc.inp is not None else None
    speaking = [c for c in own if c.out is not None and c.out["text"]]
    final_call = max(speaking, key=lambda c: (c.end, c.start)) if speaking else None
    inter: list[str]
    if a_out is not None:
        final_text = a_out["text"]
        inter = [c.out["text"] for c in speaking if c.out is not None]
        if inter and inter[-1] == final_text:
            inter = inter[:-1]
    else:
        final_text = final_call.out["text"] if final_call and final_call.out else None
        inter = [c.out["text"] for c in speaking if c is not final_call and c.out is not None]
    return user_text, final_text, inter


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
        tokens=(a.tokens[0] + b.tokens[0], a.tokens[1] + b.tokens[1]),
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
