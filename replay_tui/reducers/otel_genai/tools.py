"""Logical model calls and tool calls of a turn (design.md §4.4 and §4.7).

A model call is one chain of nested inference spans (wrapper and provider
span are one call); a tool call is one group of nested tool spans of the same
tool (framework, MCP client, MCP server), or a tool requested only in message
parts (an OpenAI Agents SDK handoff). What a span says of its output, usage,
result or failure counts once its ``span_end`` is applied: the state after a
prefix knows only that prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from replay_tui.reducers.otel_genai.logbook import LogBook
from replay_tui.reducers.otel_genai.messages import (
    LEGACY,
    first,
    text_of,
    unwrap_result,
)
from replay_tui.reducers.otel_genai.spans import Fact, same_tool

Summary = dict[str, Any]


@dataclass(eq=False)
class View:
    """One span with what points at it: its winner's events applied, its logs."""

    sid: str
    fact: Fact
    ended: bool
    failed: bool  # status ERROR, once ended
    events: list[dict[str, Any]]
    logs: list[dict[str, Any]] = field(default_factory=list)
    _msgs: tuple[Summary | None, Summary | None] | None = None
    #: What its events and logs say (:mod:`.logbook`), made when first read.
    _book: LogBook | None = None

    def book(self) -> LogBook:
        if self._book is None:
            self._book = LogBook(self.events, self.logs)
        return self._book

    def grown(self, logs: list[dict[str, Any]], log: dict[str, Any]) -> View | None:
        """This span with ``log`` after its logs (``logs``), its book taken
        on and added to at the cost of that log; None if the log does not
        come last in the book's order (the view is then made afresh)."""
        book = self.book()
        if not book.follows(log):
            return None
        self._book = None  # this view is left behind: its book moves on
        book.add(logs, log)
        twin = View(self.sid, self.fact, self.ended, self.failed, self.events, logs)
        twin._book = book
        return twin

    def messages(self) -> tuple[Summary | None, Summary | None]:
        """(input, output) summaries, each from the first source that has
        content: v2 attributes, inference-details events and logs, ADK JSON,
        OpenLLMetry indexed attributes, legacy per-message events. The output
        is hidden until the span has ended."""
        if self._msgs is not None:
            return self._msgs
        src = self.fact.get("src", {})
        book = self.book()
        cands: list[list[Summary | None]] = []
        if "v2" in src:
            cands.append(src["v2"])
        cands.append([book.details_in, book.details_out])
        cands += [src[k] for k in ("adk", "indexed", "oi") if k in src]
        legacy = book.legacy_pair()
        if legacy is not None:
            cands.append(legacy)
        inp = next((c[0] for c in cands if c[0] is not None), None)
        out = next((c[1] for c in cands if c[1] is not None), None) if self.ended else None
        self._msgs = (inp, out)
        return self._msgs

    def usage(self) -> list[int] | None:
        """[input, output, cache read, cache write] tokens once ended:
        attributes, then details events and logs, then ADK's usage_metadata."""
        if not self.ended:
            return None
        found: list[int] | None = self.fact.get("usage")
        if found is not None:
            return found
        found = self.book().usage
        if found is not None:
            return found
        found = self.fact.get("usage_adk")
        return found


@dataclass(eq=False)
class Info:
    """A span's place in its tree (design.md §4.3)."""

    covered: bool  # an agent, workflow or tool span above it
    inf_parent: str | None  # nearest inference ancestor, not across agent/workflow/tool
    tool_parent: str | None  # nearest tool ancestor, not across agent/workflow/inference
    under_tool: bool
    agent: str | None
    own_agent: str | None


@dataclass(eq=False)
class Call:
    """One logical model call."""

    chain: list[str]  # span ids, leaf (provider) first
    agent: str | None
    delegated: bool  # under a tool span (an AgentTool): its speech is not the turn's
    start: int
    end: int
    usage: list[int] | None
    inp: Summary | None
    out: Summary | None
    ended: bool
    model: str | None


@dataclass(eq=False)
class ToolCall:
    name: str
    call_id: Any
    args: Any
    result: Any
    is_error: bool
    error_type: str | None
    start: int
    agent: str | None = None
    from_span: bool = True
    span: str | None = None
    duration_s: float | None = None

    def clone(self) -> ToolCall:
        """A copy (faster than dataclasses.replace, which checks fields)."""
        twin: ToolCall = ToolCall.__new__(ToolCall)
        twin.__dict__.update(self.__dict__)
        return twin

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "args": self.args,
            "result": self.result,
            "is_error": self.is_error,
            "error_type": self.error_type,
            "duration_s": self.duration_s,
            "span": self.span,
        }


def new_view(sid: str, entry: Mapping[str, Any], logs: list[dict[str, Any]]) -> View:
    fact = entry["fact"]
    copy = fact["copy"]
    ended = copy in entry["ended"]
    failed = ended and (fact["status"] == "ERROR" or copy in entry["failed"])
    events = [e for e in entry["events"] if e["copy"] == copy]
    return View(sid=sid, fact=fact, ended=ended, failed=failed, events=events, logs=logs)


@dataclass(eq=False)
class Reuse:
    """What a trace's last derivation built, kept in the rules' memo for the
    spans that did not change since (``revs`` counts each span's changes):
    a record then costs less than deriving its whole trace afresh. Views are
    compared by identity, so a call or tool call is reused only when every
    span it reads is the very view it was built from."""

    revs: dict[str, int] = field(default_factory=dict)
    views: dict[str, tuple[int, list[dict[str, Any]], View]] = field(default_factory=dict)
    calls: dict[tuple[str, ...], tuple[tuple[Any, ...], Call]] = field(default_factory=dict)
    tools: dict[tuple[str, ...], tuple[tuple[Any, ...], ToolCall]] = field(default_factory=dict)
    old_views: dict[str, tuple[int, list[dict[str, Any]], View]] = field(default_factory=dict)
    old_calls: dict[tuple[str, ...], tuple[tuple[Any, ...], Call]] = field(default_factory=dict)
    old_tools: dict[tuple[str, ...], tuple[tuple[Any, ...], ToolCall]] = field(default_factory=dict)
    #: The trace's last derivation (``turns._Tree``), to follow the next record by its change.
    derived: Any = None

    def begin(self) -> None:
        """A derivation starts: what the last one built may be taken again."""
        self.old_views, self.old_calls, self.old_tools = self.views, self.calls, self.tools
        self.views, self.calls, self.tools = {}, {}, {}

    def view(
        self,
        sid: str,
        entry: Mapping[str, Any],
        logs: list[dict[str, Any]],
        grown: tuple[list[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> View:
        """Span ``sid``'s view: the last one if nothing it reads changed;
        given ``grown`` (``logs`` is that list and that log after it), the
        last one's grown by the log when it was made from that list."""
        rev = self.revs.get(sid, 0)
        got = self.old_views.get(sid)
        view: View | None = None
        if got is not None and got[0] == rev:
            if got[1] is logs:
                view = got[2]
            elif grown is not None and got[1] is grown[0]:
                view = got[2].grown(logs, grown[1])
            elif len(got[1]) == len(logs) and all(
                a is b for a, b in zip(got[1], logs, strict=True)
            ):
                view = got[2]
        if view is None:
            view = new_view(sid, entry, logs)
        self.views[sid] = (rev, logs, view)
        return view

    def call(self, chain: list[str], views: dict[str, View], info: dict[str, Info]) -> Call:
        key = (*(views[k] for k in chain), info[chain[0]].agent, info[chain[-1]].under_tool)
        got = self.old_calls.get(tuple(chain))
        call = got[1] if got is not None and got[0] == key else make_call(chain, views, info)
        self.calls[tuple(chain)] = (key, call)
        return call

    def tool(self, group: list[str], views: dict[str, View], info: dict[str, Info]) -> ToolCall:
        """A fresh copy (filling from message parts changes it)."""
        key = (*(views[k] for k in group), info[group[0]].agent)
        got = self.old_tools.get(tuple(group))
        if got is not None and got[0] == key:
            tool = got[1]
        else:
            tool = _tool_of(group[0], [views[k] for k in group], info)
        self.tools[tuple(group)] = (key, tool)
        return tool.clone()


def chains_of(ordered: list[str], kind: dict[str, str], info: dict[str, Info]) -> list[list[str]]:
    """Inference spans linked to their inference parent: a tree with one
    leaf is one call (leaf first); with several, each leaf chain below the
    branching point is one."""
    mem = set(ordered)
    inf_children: dict[str, list[str]] = {}
    tops: list[str] = []
    for k in ordered:
        if kind[k] != "inference":
            continue
        p = info[k].inf_parent
        if p is not None and p in mem and kind.get(p) == "inference":
            inf_children.setdefault(p, []).append(k)
        else:
            tops.append(k)
    leaves: dict[str, int] = {}
    single: dict[str, str | None] = {}
    for top in tops:
        order, work = [], [top]
        while work:
            n = work.pop()
            order.append(n)
            work.extend(inf_children.get(n, []))
        for n in reversed(order):
            kids = inf_children.get(n, [])
            leaves[n] = 1 if not kids else sum(leaves[c] for c in kids)
            single[n] = n if not kids else (single[kids[0]] if leaves[n] == 1 else None)
    parent_inf = {c: p for p, cs in inf_children.items() for c in cs}
    chains: list[list[str]] = []
    pending = list(reversed(tops))
    while pending:
        n = pending.pop()
        leaf = single[n]
        if leaf is not None:
            chain = [leaf]
            while chain[-1] != n:
                chain.append(parent_inf[chain[-1]])
            chains.append(chain)
        else:
            pending.extend(reversed(inf_children.get(n, [])))
    return chains


def make_call(chain: list[str], views: dict[str, View], info: dict[str, Info]) -> Call:
    vs = [views[k] for k in chain]
    msgs = [v.messages() for v in vs]
    return Call(
        chain=chain,
        agent=info[chain[0]].agent or first(v.fact.get("agent") for v in vs),
        delegated=info[chain[-1]].under_tool,
        start=min(v.fact["start"] for v in vs),
        end=max(v.fact["end"] for v in vs),
        usage=next((u for u in (v.usage() for v in vs) if u), None),
        inp=next((i for i, _ in msgs if i is not None), None),
        out=next((o for _, o in msgs if o is not None), None),
        ended=vs[-1].ended,
        model=first(v.fact.get("model") for v in vs),
    )


def span_tools(
    ordered: list[str],
    kind: dict[str, str],
    info: dict[str, Info],
    views: dict[str, View],
    reuse: Reuse,
) -> list[ToolCall]:
    """Tool calls from tool spans: nested spans of one tool are one call."""
    outermost: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for k in ordered:
        if kind[k] != "tool":
            continue
        p = info[k].tool_parent
        if p is not None and p in outermost and same_tool(views[p].fact, views[k].fact):
            outermost[k] = outermost[p]
        else:
            outermost[k] = k
        groups.setdefault(outermost[k], []).append(k)
    out: list[ToolCall] = []
    for _, members in sorted(
        groups.items(), key=lambda kv: (views[kv[0]].fact["start"], views[kv[0]].fact["copy"])
    ):
        out.append(reuse.tool(members, views, info))
    return out


def _said(view: View, side: str) -> Any:
    """A tool span's arguments (``input``) or result (``output``) as its own
    per-message events say them (Strands: ``gen_ai.tool.message`` holds the
    arguments, ``gen_ai.choice`` the result's content blocks)."""
    for event in view.events:
        msg = event.get("msg")
        if event["name"] not in LEGACY or event.get("side") != side or not msg:
            continue
        for part in msg["parts"]:
            if part.get("type") == "tool_call_response" and part.get("response") is not None:
                return part["response"]
        text = text_of([msg])
        if text is not None:
            return unwrap_result(text)
    return None


def _tool_of(top: str, vs: list[View], info: dict[str, Info]) -> ToolCall:
    head = vs[0]
    name = first(v.fact.get("tool_name") for v in vs)
    if not name:
        bits = head.fact["name"].split(" ", 1)
        name = bits[1] if len(bits) == 2 else head.fact["name"]
    done = [v for v in vs if v.ended]
    error_type = first(v.fact.get("error_type") for v in done)
    is_error = any(v.failed for v in done) or error_type is not None
    if is_error and not error_type:
        error_type = (
            first(e.get("exc_type") for v in vs for e in v.events if e["name"] == "exception")
            or "_OTHER"
        )
    # a failure said only by the result (a LangChain ToolMessage's status): no type
    is_error = is_error or any(v.fact.get("tool_failed") for v in done)
    duration = None
    if head.ended:
        duration = round((head.fact["end"] - head.fact["start"]) / 1e9, 6)
    return ToolCall(
        name=str(name),
        call_id=first(v.fact.get("tool_call_id") for v in vs),
        args=first([*(v.fact.get("args") for v in vs), *(_said(v, "input") for v in vs)]),
        result=first([*(v.fact.get("result") for v in done), *(_said(v, "output") for v in done)]),
        is_error=is_error,
        error_type=str(error_type) if is_error and error_type is not None else None,
        start=head.fact["start"],
        agent=info[top].agent,
        span=top,
        duration_s=duration,
    )


def _responses(calls: list[Call]) -> list[tuple[int, dict[str, Any]]]:
    """Tool responses of every call's input, deduplicated, with the index of
    the call where each first appears."""
    found: list[tuple[int, dict[str, Any]]] = []
    seen: set[tuple[str, ...]] = set()
    for i, call in enumerate(calls):
        for r in call.inp["responses"] if call.inp else []:
            key = ("id", r["id"]) if r["id"] else ("v", repr(r.get("name")), repr(r["response"]))
            if key not in seen:
                seen.add(key)
                found.append((i, r))
    return found


class _Queue:
    """Indexes in order, taken from the front: those no longer eligible are
    skipped for good (claimed, or answered by a call not later than the
    current one: calls come in order), so a whole pass costs linear time."""

    __slots__ = ("at", "items")

    def __init__(self) -> None:
        self.items: list[int] = []
        self.at = 0

    def head(self, gone: Callable[[int], bool]) -> int | None:
        while self.at < len(self.items) and gone(self.items[self.at]):
            self.at += 1
        return self.items[self.at] if self.at < len(self.items) else None


def _response_queues(
    responses: list[tuple[int, dict[str, Any]]], ids: set[str]
) -> tuple[dict[str, _Queue], dict[str | None, _Queue]]:
    """Responses by call id, and (those whose id matches no request) by tool name."""
    by_id: dict[str, _Queue] = {}
    by_name: dict[str | None, _Queue] = {}
    for j, (_, r) in enumerate(responses):
        if r["id"]:
            by_id.setdefault(r["id"], _Queue()).items.append(j)
        name = r.get("name")
        if r["id"] not in ids and (name is None or isinstance(name, str)):
            by_name.setdefault(name, _Queue()).items.append(j)
    return by_id, by_name


def parts_tools(calls: list[Call]) -> list[ToolCall]:
    """Tool calls from the tool_call parts of model outputs; results from the
    tool responses of LATER calls' inputs, by id, else (ids that match no
    request) the next unclaimed one by name."""
    requested = [(i, c, tc) for i, c in enumerate(calls) for tc in (c.out or {}).get("calls", [])]
    if not requested:
        # nothing to answer: the inputs' responses are not read (a call's
        # output, and its requests, are known once it ends: a long call's
        # logs, which come before, do not read its input's responses again)
        return []
    responses = _responses(calls)
    ids = {tc["id"] for _, _, tc in requested if tc["id"]}
    by_id, by_name = _response_queues(responses, ids)
    claimed: set[int] = set()
    out: list[ToolCall] = []
    for i, call, tc in requested:

        def gone(j: int, i: int = i) -> bool:
            return j in claimed or responses[j][0] <= i

        m = by_id[tc["id"]].head(gone) if tc["id"] in by_id else None
        if m is None:
            heads = [q.head(gone) for q in (by_name.get(None), by_name.get(tc["name"])) if q]
            m = min((h for h in heads if h is not None), default=None)
        if m is not None:
            claimed.add(m)
        result = unwrap_result(responses[m][1]["response"]) if m is not None else None
        out.append(
            ToolCall(
                name=tc["name"],
                call_id=tc["id"],
                args=tc["arguments"],
                result=result,
                # Bedrock's toolResult status error, Anthropic's is_error: failed, no type
                is_error=m is not None and responses[m][1].get("error") is True,
                error_type=None,
                start=call.end,
                agent=call.agent,
                from_span=False,
            )
        )
    return out


def _empty(value: Any) -> bool:
    return value is None or value == {} or value == "" or value == []


def fill_from_parts(
    spans: list[ToolCall], calls: list[Call], warnings: list[str] | None = None
) -> list[ToolCall]:
    """Tool spans claim message parts (by call id, else the first unclaimed
    one of the same name) to fill missing args/result; parts no span claims
    are tool calls of their own, placed after the tool requested before them."""
    ptools = parts_tools(calls)
    if not spans:
        return ptools
    claimed: dict[int, ToolCall] = {}
    by_id: dict[str, _Queue] = {}
    by_name: dict[str, _Queue] = {}
    for j, p in enumerate(ptools):
        if p.call_id:
            by_id.setdefault(p.call_id, _Queue()).items.append(j)
        by_name.setdefault(p.name, _Queue()).items.append(j)
    for t in spans:
        m = None
        if isinstance(t.call_id, str) and t.call_id in by_id:
            m = by_id[t.call_id].head(claimed.__contains__)
        if m is None and t.name in by_name:
            m = by_name[t.name].head(claimed.__contains__)
        if m is None:
            continue
        claimed[m] = t
        p = ptools[m]
        if _empty(t.args) and not _empty(p.args):
            t.args = p.args
        if _empty(t.result) and not _empty(p.result):
            t.result = p.result
    out = list(spans)
    prev: ToolCall | None = None
    for j, p in enumerate(ptools):
        if j in claimed:
            prev = claimed[j]
            continue
        if warnings is not None:
            warnings.append(f"tool {p.name} appears only in message parts, without a tool span")
        at = next(i for i, t in enumerate(out) if t is prev) + 1 if prev is not None else 0
        out.insert(at, p)
        prev = p
    return out


def copies(tools: Iterable[ToolCall]) -> list[ToolCall]:
    """Fresh copies (filling changes tool calls; a turn kept for later must not change)."""
    return [t.clone() for t in tools]
