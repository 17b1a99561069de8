"""The ``otel_genai`` rules: an agent's turns from its OpenTelemetry GenAI trace.

The trace source (:mod:`replay_tui.formats.otel`) turns a trace file (OTLP/JSON,
Collector JSON lines, Jaeger, Tempo) into one record per span start, span
event, log record and span end, in time order (design: ``span_start``,
``span_event``, ``log``, ``span_end``; the whole span is in its start record).
These rules fold the records into a store of spans and derive the turns from
it as a pure function of the store, so the state after the last record does
not depend on the order the records came in (reverse, shuffled, traces
interleaved, logs first: all give the same turns).

State:

- ``turns``: one per user exchange, in order: ``user_text``, ``final_text``,
  ``intermediate_texts``, ``agents``, ``tool_calls`` (``name``, ``args``,
  ``result``, ``is_error``, ``error_type``, ``duration_s``, ``span``),
  ``tokens`` (``input``, ``output``, ``cache_read``, ``cache_write``:
  each logical model call once; the input holds the cache's tokens),
  ``llm_calls``; and ``trace``, ``anchor`` (the span the turn hangs from),
  ``status`` (``running`` until its anchor span ends, then ``done`` or
  ``failed``), ``conversation``;
- ``tokens``: the totals; ``session``: the session key (``kind``:
  ``session_name``, ``conversation`` or ``session_id``, ``value``, and where
  it was found); ``content_captured``: whether any text, argument or result
  was recorded (messages that kept their shape but not their words, and the
  ``{}`` some recorders then write for a tool's arguments, are not: a value
  not captured is null);
- ``unattributed``: the logs no one model call can claim (no span id, and
  they could be either of two calls, or none), in time order: ``seq``,
  ``name``, ``says`` (in a few words), ``why``; never merged into a turn;
- ``open``: span id -> name, the spans started and not ended;
- ``cost``: what the model calls cost (:mod:`replay_tui.reducers.pricing`).

The state holds only what a user reads (every field is in docs/otel.md).
What the rules read to derive it, the store of every span's facts, events
and logs (:mod:`replay_tui.reducers.otel_genai.spans`) and each trace's
last derivation, is kept in their memo (``ctx.memo``), which the state
alone cannot give back: ``memo_holds_history`` tells the engine to rebuild
a prefix's state from the first record, never from a later checkpoint.

A span's output, usage, tool result and failure count once its ``span_end``
is applied, and a span event once its own record is: the state after a
prefix knows only that prefix. Nothing stops replay: a span exported twice
(the first copy wins), a loop in parent links (broken at its earliest span),
an end before the start (clamped by the source), an agent span with nothing
in it and a tool known only from message parts are warnings at the record
where they are found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replay_tui.reducers import pricing
from replay_tui.reducers.base import CallFacts, Context, State, StateView
from replay_tui.reducers.otel_genai.attribution import route_traceless, unattributed
from replay_tui.reducers.otel_genai.messages import (
    DETAILS,
    LEGACY,
    first,
    legacy_message,
    parse_messages,
)
from replay_tui.reducers.otel_genai.order import TurnOrder, priced
from replay_tui.reducers.otel_genai.spans import (
    add_end,
    add_event,
    add_log,
    add_start,
    is_open,
    new_trace,
)
from replay_tui.reducers.otel_genai.tools import Call, Reuse
from replay_tui.reducers.otel_genai.turns import (
    Touched,
    TraceResult,
    derive_trace,
    has_pending,
    settle_trace,
    token_counts,
)
from replay_tui.reducers.otel_genai.words import msg_words, short
from replay_tui.reducers.sessions.rules import one_line
from replay_tui.state.drafts import DictDraft

if TYPE_CHECKING:
    from replay_tui.formats.envelope import Event

SPAN_KINDS = frozenset({"span_start", "span_event", "span_end"})
KINDS = frozenset({*SPAN_KINDS, "log"})
_MEMO_KEY = "otel_genai"
#: The state's fields written from every trace's derivation at once.
_TOP = ("tokens", "cost", "session", "content_captured", "unattributed")


#: Traces whose last derivation is kept to build on (:meth:`_Cache.reuse_of`).
KEEP_DERIVED = 64


class MemoLost(RuntimeError):
    """These rules were given a state past its first record without the
    memo that came with it (the engine rebuilds from the first record)."""


@dataclass(eq=False)
class _Cache:
    """The store of spans the turns are derived from, mirrors of the state's
    turns and totals, and each trace's derived turns: kept in ``ctx.memo``
    (so a record costs its own trace, and the state holds what users read)."""

    store: dict[str, Any]
    results: dict[str, TraceResult] = field(default_factory=dict)
    reuse: dict[str, Reuse] = field(default_factory=dict)
    turns: list[dict[str, Any]] = field(default_factory=list)
    top: dict[str, Any] = field(default_factory=dict)
    order: TurnOrder = field(default_factory=TurnOrder)
    #: Logs with no trace id that no model call can claim alone.
    loose: list[dict[str, Any]] = field(default_factory=list)
    #: Each trace's logs that no model call can claim alone (only traces with some),
    #: and the loose logs they were last written with: the state's list is
    #: made again only when one of them changes, not at every record.
    stray: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    written_loose: list[dict[str, Any]] = field(default_factory=list)
    #: The trace whose open turns are left to build (``ctx.settle_later``).
    pending: str | None = None

    def reuse_of(self, tid: str) -> Reuse:
        """What trace ``tid``'s last derivation built, kept for the
        :data:`KEEP_DERIVED` traces changed last only: a record of a trace
        changed longer ago derives it afresh from its store (the same turns,
        since derivation is a pure function of the store), so memory is not
        held for every trace a long document ever had."""
        reuse = self.reuse.pop(tid, None)
        if reuse is None:
            reuse = Reuse()
        self.reuse[tid] = reuse  # the last changed last
        if len(self.reuse) > KEEP_DERIVED:
            # never the trace with turns left to build: they are built from it
            oldest = next(t for t in self.reuse if t != self.pending)
            del self.reuse[oldest]
        return reuse

    def strays_changed(self, dirty: set[str]) -> bool:
        """Note the dirty traces' unattributed logs; whether any changed."""
        changed = self.loose != self.written_loose
        self.written_loose = self.loose
        for tid in dirty:
            result = self.results.get(tid)
            new = result.unattributed if result is not None and tid in self.store else []
            if new != self.stray.get(tid, []):
                changed = True
                if new:
                    self.stray[tid] = new
                else:
                    self.stray.pop(tid, None)
        return changed


def _plain(value: Any) -> Any:
    """A plain copy of a JSON value, frozen or drafted or not."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _derive(
    cache: _Cache, dirty: set[str], touched: Touched | None = None, defer: bool = False
) -> list[str]:
    """Derive the dirty traces again; the warnings they newly give. With
    ``touched`` (the record that changed the one dirty trace), its trace may
    be derived by that change only, and with ``defer`` its open turns later."""
    store = cache.store
    routed, cache.loose = route_traceless(store) if store.get("", {}).get("logs") else ({}, [])
    said: list[str] = []
    for tid in sorted(dirty):
        if tid not in store:
            continue
        old = cache.results.get(tid)
        trace = store[tid] if tid else {"spans": store[tid]["spans"], "logs": []}
        reuse = cache.reuse_of(tid)
        new = derive_trace(tid, trace, routed.get(tid, []), reuse, touched, defer)
        if has_pending(reuse):
            cache.pending = tid
        elif cache.pending == tid:
            cache.pending = None
        seen = set(old.warnings) if old is not None else set()
        for w in new.warnings:
            if w not in seen:
                seen.add(w)
                said.append(w)
        cache.results[tid] = new
    return said


def _span_name(before: StateView, payload: Mapping[str, Any], kind: str) -> str:
    """The span's name: its start's and end's own, an event's span's as
    the spans open before it say (an event's record does not carry it)."""
    name = payload.get("name")
    if isinstance(name, str) and kind != "span_event":
        return name
    opened = before["open"].get(_text(payload.get("span_id")))
    return str(opened) if opened is not None else f"span {payload.get('span_id')}"


def span_seconds(start: Any, end: Any) -> str:
    """``0.21 s``, ``1.2 s``, ``0.6 ms``: how long a span took."""
    if type(start) is not int or type(end) is not int:
        return ""
    took = (end - start) / 1e9
    if took >= 1:
        return f"{took:.1f} s"
    return f"{took:.2f} s" if took >= 0.01 else f"{took * 1000:.1f} ms"


def status_word(status: Any) -> str:
    """``error`` for a span whose status says ERROR, else ``ok``."""
    code = status.get("code") if isinstance(status, Mapping) else None
    return "error" if code == "ERROR" else "ok"


def _span_words(p: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    """(what the span is, its tool or operation, a short argument) from a span_start."""
    name = _text(p.get("name"))
    attrs = p.get("attributes")
    attrs = attrs if isinstance(attrs, Mapping) else {}
    tool = attrs.get("gen_ai.tool.name")
    op = _text(attrs.get("gen_ai.operation.name")) or name.split(" ", 1)[0]
    model = first([attrs.get("gen_ai.request.model"), attrs.get("gen_ai.response.model")])
    if isinstance(tool, str) and tool and tool != "(merged tools)":
        arg = short(
            first(
                [
                    attrs.get("gen_ai.tool.call.arguments"),
                    attrs.get("gcp.vertex.agent.tool_call_args"),
                ]
            )
        )
        return name, tool, arg or None
    if model is not None and str(model) not in name:
        return f"{name} {model}", op or name, str(model)
    agent = attrs.get("gen_ai.agent.name")
    return name, op or name, str(model or agent) if (model or agent) else None


def _update(target: Any, old: Any, new: Any) -> None:
    """Make ``target`` (which equals ``old``) equal ``new``, writing only
    what differs: a draft then records, and a diff shows, what changed.
    What is written is a copy: the state never shares a container with the
    rules' memo, so changing it in place later cannot change the memo."""
    if isinstance(new, dict):
        for key, value in new.items():
            if key not in old:
                target[key] = _plain(value)
            elif old[key] is not value and old[key] != value:
                _put(target, key, old[key], value)
        for key in [k for k in old if k not in new]:
            del target[key]
        return
    for i, value in enumerate(new):
        if i >= len(old):
            target.append(_plain(value))
        elif old[i] is not value and old[i] != value:
            _put(target, i, old[i], value)
    if len(old) > len(new):
        del target[len(new) :]


def _update_from(target: list[Any], old: list[Any], new: list[Any], first: int) -> None:
    """:func:`_update` of a list from position ``first`` on (the rest is equal)."""
    for j, value in enumerate(new):
        i = first + j
        if i >= len(old):
            target.append(_plain(value))
        elif old[i] is not value and old[i] != value:
            _put(target, i, old[i], value)
    if len(old) > first + len(new):
        del target[first + len(new) :]


def _put(target: Any, key: Any, old: Any, new: Any) -> None:
    if isinstance(new, dict | list) and type(old) is type(new):
        _update(target[key], old, new)
    else:
        target[key] = _plain(new)


def _tool_changes(old: Sequence[Any], new: Sequence[Any]) -> list[str]:
    """Tool calls added, failed or answered between two versions of a turn."""
    said = [f"tool call {t['name']}" for t in new[len(old) :]]
    for was, now in zip(old, new, strict=False):
        if was["name"] != now["name"]:
            continue
        if now["is_error"] and not was["is_error"]:
            said.append(f"tool {now['name']} failed ({now['error_type']})")
        elif now["result"] is not None and was["result"] is None:
            said.append(f"tool {now['name']} returned {short(now['result'], 40)}")
    return said


class OtelGenAIRules:
    name = "otel_genai"
    version = "1.0.0"
    kinds = KINDS
    #: The source these rules are for: never chosen for an events.jsonl by its first kind.
    source_format = "otel"
    #: The Collector's lines come in the order of export: a span is sent when
    #: it ends, so a parent's start (and what happened in it) comes after
    #: records of later times, and rightly so.
    late_ts_kinds = KINDS
    #: A row says what the rules say of its record, not the record's JSON.
    row_summary_only = True
    #: Spans nest: calls folded (``v``) are drawn as a span tree, each span
    #: under the one its start names (``call_parent``), even one exported later.
    calls_nest = True
    #: The state has a ``cost`` (see :mod:`replay_tui.reducers.pricing`): reports name the prices.
    priced = True
    #: The store of spans is in the memo, not the state: rebuild from the first record.
    memo_holds_history = True

    def initial_state(self) -> State:
        return {
            "turns": [],
            "tokens": token_counts((0, 0, 0, 0)),
            "cost": pricing.cost_state(turns=False),
            "session": None,
            "content_captured": False,
            "unattributed": [],
            "open": {},
        }

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        cache = self._cache(state, ctx)
        p = event.payload
        tid = _text(p.get("trace_id"))
        defer = ctx.settle_later
        if cache.pending is not None and (cache.pending != tid or not defer):
            self._settle(state, cache)
        sid = _text(p.get("span_id"))
        trace = cache.store.get(tid) or new_trace()
        dirty: set[str] = set()
        touched: Touched | None = None
        if event.kind in SPAN_KINDS:
            if self._span_record(state, event, ctx, trace, sid):
                revs = cache.reuse_of(tid).revs
                revs[sid] = revs.get(sid, 0) + 1
                dirty.add(tid)
                touched = (event.kind, sid, None)
        elif event.kind == "log":
            kept = add_log(trace, p, event.seq)
            if kept is not None:
                dirty.add(tid)
                touched = ("log", sid, kept[0])
        if tid in dirty:
            cache.store[tid] = trace
        if dirty and cache.store.get("", {}).get("logs"):
            dirty = set(cache.store)  # logs with no trace id may move with any span
            touched = None
        if dirty:
            before = [cache.results.get(t) for t in dirty]
            for warning in _derive(cache, dirty, touched, defer and touched is not None):
                ctx.warn(warning)
            same = all(cache.results.get(t) is b for t, b in zip(dirty, before, strict=True))
            if not same or cache.loose != cache.written_loose:
                self._write_turns(state, cache, dirty)
        return state

    def settle(self, state: State, ctx: Context) -> None:
        """Write the turns ``apply`` left to build (``ctx.settle_later``)."""
        cache = ctx.memo(state).get(_MEMO_KEY)
        if isinstance(cache, _Cache):
            self._settle(state, cache)

    def _settle(self, state: State, cache: _Cache) -> None:
        tid, cache.pending = cache.pending, None
        if tid is None or tid not in cache.reuse:
            return
        result = settle_trace(tid, cache.reuse[tid])
        if result is not None:
            cache.results[tid] = result
            self._write_turns(state, cache, {tid})

    def _span_record(
        self, state: State, event: Event, ctx: Context, trace: dict[str, Any], sid: str
    ) -> bool:
        """Fold a span's record into the store; whether the store changed."""
        p = event.payload
        if event.kind == "span_start":
            entry, changed, twice = add_start(trace, sid, p)
        elif event.kind == "span_end":
            entry, changed, twice = add_end(trace, sid, p)
            if p.get("clamped") is True:
                ctx.warn(f"span {sid} ends before it starts; end clamped to start")
        else:
            entry, changed, twice = add_event(trace, sid, p)
        if twice:
            ctx.warn(f"span {sid} exported more than once; first copy kept")
        if not changed:
            return False
        opened = state["open"]
        if is_open(entry):
            if opened.get(sid) != entry["fact"]["name"]:
                opened[sid] = entry["fact"]["name"]
        elif sid in opened:
            del opened[sid]
        return True

    def _cache(self, state: State, ctx: Context) -> _Cache:
        """The memo that came with ``state``: new for the initial state;
        :class:`MemoLost` for any other (the store it was made from is gone)."""
        memo = ctx.memo(state)
        cache = memo.get(_MEMO_KEY)
        if isinstance(cache, _Cache):
            return cache
        # a draft's frozen value (its base, unless it was written since:
        # the app's draft spans many events)
        source: Mapping[str, Any] = state.commit(None) if isinstance(state, DictDraft) else state
        initial = self.initial_state()
        if _plain(source) != initial:
            raise MemoLost(
                "the otel_genai rules were given a state past its first record without "
                "their memo (the store of spans it was made from): replay from the first record"
            )
        cache = _Cache(store={}, turns=[], top={k: initial[k] for k in _TOP})
        memo[_MEMO_KEY] = cache
        return cache

    @staticmethod
    def _write_turns(state: State, cache: _Cache, dirty: set[str]) -> None:
        """Write what changed of the ordered turns and totals: from the
        first position the changed traces moved (:mod:`.order`) on."""
        order = cache.order
        turns, first = order.joined(order.update(cache.results, sorted(dirty)))
        public = [priced(t) for t in turns[first:]]
        if public != cache.turns[first:]:
            _update_from(state["turns"], cache.turns, public, first)
            cache.turns[first:] = public
        top: dict[str, Any] = {
            "tokens": token_counts(order.tokens),
            "cost": order.cost.state(),
            "session": order.session_key(),
            "content_captured": order.content > 0,
        }
        if cache.strays_changed(dirty):
            top["unattributed"] = unattributed(cache.stray.values(), cache.loose)
        for key, value in top.items():
            if cache.top.get(key) != value:
                state[key] = value
                cache.top[key] = _plain(value)

    def turn_calls(self, state: State, ctx: Context) -> list[list[Call]]:
        """Each turn's model calls, in the order of ``state["turns"]``, from
        the memo ``ctx`` keeps for ``state`` (what ``usage`` puts to models)."""
        cache = self._cache(state, ctx)
        self._settle(state, cache)
        turns, _ = cache.order.joined(0)
        return [turn.calls for turn in turns]

    # -- prose ------------------------------------------------------------
    def summary(self, state: StateView) -> str:
        if state["open"]:
            return "running"
        turns = state["turns"]
        if turns:
            return str(turns[-1]["status"])
        return "no turns"

    def still_open(self, state: StateView) -> list[str]:
        """Spans started and not ended."""
        return [f"span {sid} {name}: started, not ended" for sid, name in state["open"].items()]

    def explain(self, before: StateView, event: Event, after: StateView) -> str:
        p = event.payload
        kind = event.kind
        if kind == "log":
            head = f"log {p.get('event_name') or '(no event name)'}"
        else:
            head = f"{kind} {_span_name(before, p, kind)}"
            if kind == "span_end":
                took = span_seconds(p.get("start_ns"), p.get("end_ns"))
                head += f" {status_word(p.get('status'))}" + (f" {took}" if took else "")
            elif kind == "span_event":
                head += f" event {self.row_summary(event)}"
        said = self._changes(before, after)
        return f"{head}: {'; '.join(said)}" if said else head

    @staticmethod
    def _changes(before: StateView, after: StateView) -> list[str]:
        said: list[str] = []
        old, new = before["turns"], after["turns"]
        if len(new) > len(old):
            said += [f"turn {i + 1} starts" for i in range(len(old), len(new))]
        elif len(new) < len(old):
            said.append(f"{len(old) - len(new)} turn(s) withdrawn")
        if new and len(old) >= len(new):
            last_old, last_new = old[len(new) - 1], new[-1]
            if last_new["status"] != last_old["status"]:
                said.append(f"turn {len(new)} {last_new['status']}")
            if last_new["final_text"] != last_old["final_text"] and last_new["final_text"]:
                said.append(f"turn {len(new)} says {one_line(last_new['final_text'], 60)!r}")
            said += _tool_changes(last_old["tool_calls"], last_new["tool_calls"])
        di = after["tokens"]["input"] - before["tokens"]["input"]
        do = after["tokens"]["output"] - before["tokens"]["output"]
        if di or do:
            read = after["tokens"]["cache_read"] - before["tokens"]["cache_read"]
            cached = f" ({read:+d} read from a cache)" if read else ""
            said.append(f"{di:+d} input{cached}, {do:+d} output tokens")
        if after["session"] != before["session"] and after["session"] is not None:
            said.append(f"session {after['session']['kind']} {after['session']['value']}")
        return said

    def row_summary(self, event: Event) -> str | None:
        """The record in GenAI words, from the record alone."""
        p = event.payload
        kind = event.kind
        if kind == "span_start":
            words, _, arg = _span_words(p)
            if arg and arg not in words:
                words += f" {arg}"
            return one_line(words, 200)
        if kind == "span_end":
            name = _text(p.get("name"))
            took = span_seconds(p.get("start_ns"), p.get("end_ns"))
            status = status_word(p.get("status"))
            message = _text((p.get("status") or {}).get("message"))
            words = " ".join(w for w in (name or "end", status, took) if w)
            return one_line(f"{words}: {message}" if message else words, 200)
        if kind == "span_event":
            attrs: Mapping[str, Any] = p.get("attributes") or {}
            extra = first([attrs.get("exception.type"), attrs.get("exception.message")])
            return one_line(f"{p.get('name')} {extra or ''}".strip(), 200)
        if kind == "log":
            return one_line(f"{p.get('event_name') or 'log'} {self._log_text(p)}".strip(), 200)
        return None

    @staticmethod
    def _log_text(p: Mapping[str, Any]) -> str:
        name = _text(p.get("event_name"))
        body = p.get("body")
        attrs = p.get("attributes")
        attrs = attrs if isinstance(attrs, Mapping) else {}
        if name == DETAILS:
            source = {**body, **attrs} if isinstance(body, Mapping) else attrs
            out = parse_messages(source.get("gen_ai.output.messages"))
            return msg_words(out or parse_messages(source.get("gen_ai.input.messages")))
        if name in LEGACY:
            _, msg = legacy_message(name, body)
            return msg_words([msg]) if msg else ""
        return short(body, 120)

    def call_of(self, event: Event) -> str | None:
        """Every record of a span, and the logs tied to it: trace_id:span_id."""
        p = event.payload
        sid = p.get("span_id")
        if not isinstance(sid, str) or not sid:
            return None
        return f"{_text(p.get('trace_id'))}:{sid}"

    def call_parent(self, event: Event) -> str | None:
        """The span a span's start names as its parent, as ``call_of`` names
        it (it may come later: a span is exported when it ends)."""
        p = event.payload
        up = p.get("parent_id")
        if event.kind != "span_start" or not isinstance(up, str) or not up:
            return None
        return f"{_text(p.get('trace_id'))}:{up}"

    def call_facts(self, event: Event) -> CallFacts | None:
        if event.kind == "span_start":
            _, tool, arg = _span_words(event.payload)
            return CallFacts(tool=tool, arg=arg)
        if event.kind == "span_end":
            return CallFacts(status=status_word(event.payload.get("status")))
        return None


REDUCER = OtelGenAIRules()
