"""The store of spans the ``otel_genai`` rules keep in their state, and the
repaired span forest (design.md §3 and §4.1-§4.2).

The store is JSON, one entry per trace::

    store[trace_id] = {"spans": {span_id: SPAN}, "logs": [LOG, ...]}
    SPAN = {"copies": [copy, ...],   # every copy of the span id seen, by any record
            "ended":  [copy, ...],   # copies whose span_end was applied
            "failed": [copy, ...],   # of those, the ones whose span_end says ERROR
            "events": [EVENT, ...],  # span_event records applied (those the rules read)
            "fact":   FACT | None}   # from the span_start of the lowest copy seen so far

``copy`` is the copy's file position (extract.py's ``Span.seq``): the copy
earliest in the file wins whatever order its records arrive in, and only the
winner's ends and events count. A FACT holds what deriving turns reads of a
span, already parsed and its messages summarised (:func:`span_fact`), not the
whole payload: ``copy``, ``name``, ``parent``, ``start``, ``end``, ``status``,
and only those of ``op``, ``tool_name``, ``agent``, ``args``, ``result``,
``usage``, ``src`` (message sources), ``session`` ... that the span says.
Events and logs are kept only when they say something the rules read (not
ADK's ``<elided>`` messages). Logs with no trace id go under the trace ``""``.
Every list is kept sorted, so the store after a set of records does not
depend on their order.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from replay_tui.formats.otel.load import break_loops
from replay_tui.reducers.otel_genai import openinference
from replay_tui.reducers.otel_genai.messages import (
    DETAILS,
    LEGACY,
    adk_usage,
    attr_sources,
    details_fact,
    first,
    is_placeholder,
    legacy_message,
    overlay,
    parse_json,
    parse_messages,
    unwrap_result,
    usage_of,
)

Fact = dict[str, Any]
TraceStore = dict[str, Any]

WORKFLOW, AGENT, INFERENCE, TOOL, OTHER, NONE = (
    "workflow",
    "agent",
    "inference",
    "tool",
    "other",
    "none",
)
AGENTIC = frozenset({AGENT, WORKFLOW})
INFERENCE_OPS = frozenset({"chat", "generate_content", "text_completion"})
ADK_SCOPE = "gcp.vertex.agent"
#: Span events the rules read (others are shown, not kept).
KEPT_EVENTS = frozenset(
    {"exception", DETAILS, *LEGACY, "gen_ai.content.prompt", "gen_ai.content.completion"}
)
#: Where a session key can be found, by priority: (kind, attribute, on the resource?).
SESSION_SOURCES = (
    ("session_name", "agentevals.session_name", True),
    ("conversation", "gen_ai.conversation.id", False),
    ("conversation", "gen_ai.conversation.id", True),
    ("session_id", "session.id", False),
    ("session_id", "session.id", True),
)


def _str(value: Any) -> str | None:
    return str(value) if value is not None and value != "" else None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any, default: int) -> int:
    return value if type(value) is int else default


def _copy(p: Mapping[str, Any]) -> int:
    """The copy's file position (0 when the source says none)."""
    copy = p.get("copy")
    return copy if type(copy) is int else 0


def _status(value: Any) -> str:
    code = _dict(value).get("code")
    return code if code in ("OK", "ERROR") else "UNSET"


def span_fact(p: Mapping[str, Any]) -> Fact:
    """What deriving turns reads of a span, from its ``span_start`` payload."""
    attrs = _dict(p.get("attributes"))
    resource = _dict(p.get("resource"))
    over = overlay(attrs)
    start = _int(p.get("start_ns"), 0)
    end = _int(p.get("end_ns"), start)
    fact: Fact = {
        "copy": _copy(p),
        "name": str(p.get("name") or ""),
        "parent": str(p.get("parent_id") or ""),
        "start": start,
        "end": max(start, end),
        "status": _status(p.get("status")),
    }
    optional = {
        "op": str(attrs.get("gen_ai.operation.name") or "").strip().lower(),
        "adk": any(k.startswith("gcp.vertex.agent.") for k in attrs)
        or attrs.get("gen_ai.system") == ADK_SCOPE,
        "adk_scope": p.get("scope") == ADK_SCOPE,
        "llm_type": str(attrs.get("llm.request.type") or "").lower(),
        "tool_name": attrs.get("gen_ai.tool.name"),
        "tool_call_id": attrs.get("gen_ai.tool.call.id"),
        "agent": _str(attrs.get("gen_ai.agent.name")),
        "conv": first([attrs.get("gen_ai.conversation.id")]),
        "error_type": first([attrs.get("error.type")]),
        "model": _str(attrs.get("gen_ai.request.model") or attrs.get("gen_ai.response.model")),
        "args": first(
            parse_json(attrs.get(k))
            for k in ("gen_ai.tool.call.arguments", "gcp.vertex.agent.tool_call_args")
        ),
        "result": first(
            unwrap_result(attrs.get(k))
            for k in ("gen_ai.tool.call.result", "gcp.vertex.agent.tool_response")
        ),
        "usage": usage_of(over),
        "usage_adk": adk_usage(attrs),
        "src": attr_sources(over) or None,
        "session": _session_hits(attrs, resource),
        "oi": openinference.span_kind(attrs),
    }
    if optional["oi"] == "TOOL":
        said = openinference.tool_facts(attrs)
        optional.update((k, v) for k, v in said.items() if optional.get(k) is None)
    # what a span does not say is left out: most spans say little of this
    fact.update((k, v) for k, v in optional.items() if _said(v))
    return fact


def _said(value: Any) -> bool:
    """Whether an optional fact is worth keeping (an argument ``{}`` is)."""
    return value is not None and value is not False and value != ""


def _session_hits(attrs: Mapping[str, Any], resource: Mapping[str, Any]) -> list[Any] | None:
    """Per :data:`SESSION_SOURCES`, the value this span offers (None: none at all)."""
    hits = [first([(resource if on_res else attrs).get(a)]) for _, a, on_res in SESSION_SOURCES]
    return hits if any(h is not None for h in hits) else None


#: Attributes that name an event when its own name does not (the Events API's
#: ``otel.event.name``, the older ``event.name``).
NAME_KEYS = ("otel.event.name", "event.name")


def event_name(name: Any, attrs: Mapping[str, Any], body: Any = None) -> str:
    """An event's or log's name: its own, else the one its attributes (or,
    for a log, its body) carry, whichever the rules read."""
    own = str(name or "")
    if own in KEPT_EVENTS:
        return own
    said = [attrs.get(k) for k in NAME_KEYS]
    said += [body.get(k) for k in NAME_KEYS] if isinstance(body, Mapping) else []
    return next((str(n) for n in said if isinstance(n, str) and n in KEPT_EVENTS), own)


def pick_call(cands: list[tuple[str, int, int]], time: int) -> str | None:
    """The model call a record with no span id belongs to, from the
    candidates' ``(key, start, end)``: the only one; else the innermost of
    those whose time range holds it, if they nest (a wrapper and its
    provider span); else none (it could be either: unattributed)."""
    if len(cands) == 1:
        return cands[0][0]
    holding = sorted((c for c in cands if c[1] <= time <= c[2]), key=lambda c: (-c[1], c[2]))
    if not holding:
        return None
    inner = holding[0]
    if all(c[1] <= inner[1] and inner[2] <= c[2] for c in holding[1:]):
        return inner[0]
    return None


def event_fact(p: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ``span_event`` record, as the rules keep it (None: one that says
    nothing they read)."""
    attrs = _dict(p.get("attributes"))
    name = event_name(p.get("name"), attrs)
    if name not in KEPT_EVENTS:
        return None
    index = _int(p.get("index"), 0)
    time = _int(p.get("time_ns"), 0)
    out: dict[str, Any] = {"copy": _copy(p), "index": index, "name": name, "time": time}
    if name == "exception":
        out["exc_type"] = first([attrs.get("exception.type")])
    elif name == DETAILS:
        out.update(details_fact(attrs))
    elif name in LEGACY:
        side, msg = legacy_message(name, attrs.get("body", attrs))
        out["side"], out["msg"] = side, msg
    else:  # gen_ai.content.prompt / gen_ai.content.completion (semconv <= 1.27)
        key = "gen_ai.prompt" if name == "gen_ai.content.prompt" else "gen_ai.completion"
        out["msgs"] = parse_messages(attrs.get(key))
    return out if _says_something(out) else None


def _says_something(fact: Mapping[str, Any]) -> bool:
    """Whether a kept event or log can change what is derived: one that
    holds only placeholders (ADK's ``<elided>`` messages) cannot."""
    if "exc_type" in fact:
        return fact["exc_type"] is not None
    if "msg" in fact:
        return bool(fact["msg"] and fact["msg"]["parts"])
    if "msgs" in fact:
        return bool(fact["msgs"])
    return fact.get("pair") is not None or fact.get("usage") is not None


def log_fact(p: Mapping[str, Any], seq: int | None = None) -> dict[str, Any] | None:
    """A ``log`` record, at any severity, as the rules keep it (None: one
    that says nothing they read); ``seq``: where it is in the timeline."""
    attrs = _dict(p.get("attributes"))
    name = event_name(p.get("event_name"), attrs, p.get("body"))
    if name != DETAILS and name not in LEGACY:
        return None
    time = _int(p.get("time_ns"), 0)
    out: dict[str, Any] = {
        "seq": seq,
        "copy": _copy(p),
        "trace": str(p.get("trace_id") or ""),
        "span": str(p.get("span_id") or ""),
        "time": time,
        "name": name,
    }
    if name == DETAILS:
        out.update(details_fact(attrs, p.get("body")))
    else:
        side, msg = legacy_message(name, p.get("body"))
        out["side"], out["msg"] = side, msg
    return out if _says_something(out) else None


# -- the store ----------------------------------------------------------------------
def new_trace() -> TraceStore:
    return {"spans": {}, "logs": []}


def _entry(trace: TraceStore, sid: str) -> dict[str, Any]:
    entry: dict[str, Any] | None = trace["spans"].get(sid)
    if entry is None:
        # tuples, made again when they grow: most stay empty or hold one
        # item, and an empty tuple costs nothing (the store holds every span)
        entry = trace["spans"][sid] = {
            "copies": (),
            "ended": (),
            "failed": (),
            "events": (),
            "fact": None,
        }
    return entry


def _add_sorted(entry: dict[str, Any], key: str, value: Any) -> bool:
    """Put ``value`` into the sorted tuple ``entry[key]``; False if it was there."""
    items = entry[key]
    at = bisect.bisect_left(items, value)
    if at < len(items) and items[at] == value:
        return False
    entry[key] = (*items[:at], value, *items[at:])
    return True


def add_copy(entry: dict[str, Any], copy: int) -> tuple[bool, bool]:
    """Note a copy of the span: (new to the entry, and it makes a second copy)."""
    new = _add_sorted(entry, "copies", copy)
    return new, new and len(entry["copies"]) == 2


#: What applying a span's record did: (its entry, the store changed, it is now exported twice).
Applied = tuple[dict[str, Any], bool, bool]


def add_start(trace: TraceStore, sid: str, p: Mapping[str, Any]) -> Applied:
    entry = _entry(trace, sid)
    copy = _copy(p)
    changed, twice = add_copy(entry, copy)
    if entry["fact"] is None or copy < entry["fact"]["copy"]:
        entry["fact"] = span_fact(p)
        changed = True
    return entry, changed, twice


def add_end(trace: TraceStore, sid: str, p: Mapping[str, Any]) -> Applied:
    entry = _entry(trace, sid)
    copy = _copy(p)
    changed, twice = add_copy(entry, copy)
    changed = _add_sorted(entry, "ended", copy) or changed
    if _status(p.get("status")) == "ERROR":
        changed = _add_sorted(entry, "failed", copy) or changed
    return entry, changed, twice


def add_event(trace: TraceStore, sid: str, p: Mapping[str, Any]) -> Applied:
    entry = _entry(trace, sid)
    copy = _copy(p)
    changed, twice = add_copy(entry, copy)
    fact = event_fact(p)
    if fact is not None:
        keys = [(e["copy"], e["index"]) for e in entry["events"]]
        at = bisect.bisect_left(keys, (copy, fact["index"]))
        if at == len(keys) or keys[at] != (copy, fact["index"]):
            if entry["events"]:
                entry["events"].insert(at, fact)  # a list once it has one
            else:
                entry["events"] = [fact]
            changed = True
    return entry, changed, twice


def _copy_of(fact: Mapping[str, Any]) -> Any:
    return fact["copy"]


def add_log(
    trace: TraceStore, p: Mapping[str, Any], seq: int | None = None
) -> tuple[dict[str, Any], int] | None:
    """Apply a ``log``: the kept log and its place (None: not read, or had already)."""
    fact = log_fact(p, seq)
    if fact is None:
        return None
    logs = trace["logs"]
    at = bisect.bisect_left(logs, fact["copy"], key=_copy_of)
    if at < len(logs) and logs[at]["copy"] == fact["copy"]:
        return None
    logs.insert(at, fact)
    return fact, at


def is_open(entry: Mapping[str, Any]) -> bool:
    """Started (the winning copy's start applied) and that copy not ended."""
    fact = entry.get("fact")
    return fact is not None and fact["copy"] not in entry["ended"]


# -- the forest ---------------------------------------------------------------------
def effective_parents(spans: Mapping[str, Fact]) -> tuple[dict[str, str | None], list[str]]:
    """span -> parent span (None: a local root), and the spans where a parent
    loop was broken. A parent not in the store makes a local root; a loop is
    broken at its member with the earliest start (tie: file position)."""
    parent: dict[str, str | None] = {}
    for sid, fact in spans.items():
        pid = fact["parent"]
        parent[sid] = pid if pid and pid in spans and pid != sid else None
    broken = break_loops(parent, lambda s: (spans[s]["start"], spans[s]["copy"]))
    return parent, broken


def classify(fact: Fact, children_kinds: frozenset[str] = frozenset()) -> str:
    """The span's GenAI kind (design.md §4.2), conventions and quirks included."""
    op = fact.get("op", "")
    name = fact["name"]
    if not op:  # "{operation} {target}" names without the attribute
        head = name.split(" ", 1)[0]
        if head in ("invoke_agent", "invoke_workflow", "execute_tool"):
            op = head
    if op in INFERENCE_OPS:
        return INFERENCE
    if op == "invoke_agent":
        return AGENT
    if op == "invoke_workflow":
        return WORKFLOW
    if op == "execute_tool":
        # ADK's "execute_tool (merged)" wraps or sums up parallel tools: transparent
        return NONE if fact.get("tool_name") == "(merged tools)" else TOOL
    if op:
        return OTHER
    oi = fact.get("oi")
    if oi:
        return openinference.KINDS.get(oi, OTHER)
    if name == "call_llm" and (fact.get("adk") or fact.get("adk_scope")):
        return INFERENCE  # ADK Python's model-call wrapper
    if fact.get("llm_type") in ("chat", "completion"):
        return INFERENCE  # OpenLLMetry
    if name == "invocation" and (fact.get("adk_scope") or AGENT in children_kinds):
        return WORKFLOW  # ADK Python's runner span: one user invocation
    return NONE


def same_tool(outer: Fact, inner: Fact) -> bool:
    """Nested tool spans of one tool (framework > MCP client > MCP server)."""
    name = outer.get("tool_name")
    if name and not is_placeholder(name) and name == inner.get("tool_name"):
        return True
    cid = outer.get("tool_call_id")
    return bool(cid) and not is_placeholder(cid) and cid == inner.get("tool_call_id")
