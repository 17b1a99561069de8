"""The ``inspect_ai`` rules: an Inspect AI sample's state after each event.

The state is the sample's ``TaskState`` as its events make it, under
Inspect's own names: ``sample_init`` gives it whole (``messages``, ``tools``,
``tool_choice``, ``store``, ``output``, ``completed``, ``metadata``); each
``state`` event's ``changes`` (a JSON Patch) changes it, and each ``store``
event's changes the store. Beside it: ``scores`` (from ``score`` events, by
scorer), ``tokens`` (the model events' usage so far), ``error`` and
``limit`` when the sample hits one, ``subtasks`` (each sub-task's name,
input, result and own store) and ``sample`` (id, epoch, input, target).

Two things of the format these rules keep to:

- a ``store`` event is written at a span's end with the store's changes
  since that span began, so the same change comes again at each enclosing
  span's end: the changes apply to the store as it was when their span
  began, which applies each change once;
- a ``@subtask`` runs with a store of its own: store events inside a
  ``subtask`` span change that sub-task's store, never the sample's.

The last event (``record``, see :mod:`replay_tui.formats.inspect.convert`)
is what the log records of the sample: the messages, output and store the
events gave must be it, or replay stops there (``divergence``). Where the
log says why they are not (the sample ended in an error or a limit before
its solver's state event was written), that is a warning saying what the
record adds, and the state takes the record. A sample without events (some
logs keep none) is its record, with a warning.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from replay_tui.core.errors import RuleViolation
from replay_tui.reducers.base import Context, State, StateView
from replay_tui.reducers.inspect_ai.patch import PatchFailed, apply_patch, obj, plain
from replay_tui.reducers.inspect_ai.words import InspectWords, differences, message_line

if TYPE_CHECKING:
    from replay_tui.envelope import Event

#: Every event type Inspect writes (0.3.x); others are passed over.
KINDS = frozenset(
    {
        "sample_init",
        "sample_limit",
        "sandbox",
        "state",
        "store",
        "model",
        "tool",
        "approval",
        "input",
        "score",
        "score_edit",
        "error",
        "logger",
        "info",
        "step",
        "subtask",
        "span_begin",
        "span_end",
        "compaction",
        "checkpoint",
        "record",
    }
)
_TOKEN_FIELDS = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("total_tokens", "total"),
    ("input_tokens_cache_read", "cache_read"),
    ("input_tokens_cache_write", "cache_write"),
    ("reasoning_tokens", "reasoning"),
)
_COMPARED = ("messages", "output", "store")


def _illegal(message: str) -> RuleViolation:
    return RuleViolation("illegal_transition", message)


def new_tokens() -> dict[str, int]:
    return {name: 0 for _, name in _TOKEN_FIELDS}


class InspectRules(InspectWords):
    name = "inspect_ai"
    version = "1.0.0"
    kinds = KINDS
    source_format = "inspect"
    #: The store snapshots at each span's start are kept in the rules' memo:
    #: a prefix's state is rebuilt from the first event.
    memo_holds_history = True
    #: Tool and model events are written when they end, stamped with their start.
    late_ts_kinds = frozenset({"tool", "model", "subtask", "sandbox", "span_begin", "span_end"})

    def initial_state(self) -> State:
        return {
            "status": "new",
            "messages": [],
            "output": None,
            "store": {},
            "tokens": new_tokens(),
        }

    def ignorable(self, event: Event) -> bool:
        """An event type newer than these rules: shown, changes nothing."""
        return True

    def summary(self, state: StateView) -> str:
        return str(state.get("status", "new"))

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        kind = event.kind
        p = obj(event.payload)
        memo = ctx.memo(state)
        for name in p.get("missing_attachments") or []:
            ctx.warn(f"attachment {name} is not in the sample's attachments: shown as written")
        if kind == "sample_init":
            if state["status"] != "new":
                raise _illegal("sample_init again: the sample already started")
            return self._init(state, p, memo)
        if kind == "record":
            return self._record(state, p, ctx)
        if state["status"] == "new" and kind in ("state", "store"):
            raise _illegal(f"a {kind} event before sample_init: nothing to change yet")
        if kind == "span_begin":
            self._span_begin(state, p, memo)
        elif kind == "step" and p.get("action") == "begin" and p.get("type") == "scorer":
            memo["scorer"] = p.get("name")
        elif kind == "state":
            self._patch_state(state, p)
        elif kind == "store":
            self._patch_store(state, p, memo, ctx)
        elif kind == "model":
            self._model(state, p)
        elif kind == "score":
            self._score(state, p, memo)
        elif kind == "subtask":
            self._subtask(state, p)
        elif kind == "error":
            state["error"] = p.get("error")
            state["status"] = "error"
        elif kind == "sample_limit":
            state["limit"] = {k: p.get(k) for k in ("type", "message", "limit")}
            state["status"] = "limit"
        return state

    def _init(self, state: State, p: dict[str, Any], memo: dict[str, Any]) -> State:
        task_state = p.get("state")
        if not isinstance(task_state, dict):
            raise _illegal("sample_init without the sample's initial state")
        fresh: State = {"status": "running"}
        sample = p.get("sample")
        if isinstance(sample, dict):
            fresh["sample"] = {k: sample.get(k) for k in ("id", "epoch", "input", "target")}
        fresh.update(task_state)
        fresh.setdefault("messages", [])
        fresh.setdefault("store", {})
        fresh["tokens"] = new_tokens()
        memo.clear()
        return fresh

    def _span_begin(self, state: State, p: dict[str, Any], memo: dict[str, Any]) -> None:
        spans = memo.setdefault("spans", {})
        span_id = p.get("id")
        if not isinstance(span_id, str):
            return
        spans[span_id] = (p.get("type"), p.get("name"), p.get("parent_id"))
        if p.get("type") == "subtask":
            subtasks = state.setdefault("subtasks", {})
            subtasks.setdefault(span_id, {"name": p.get("name"), "store": {}})
        if p.get("type") == "scorer":
            memo["scorer"] = p.get("name")
        owner, store = self._store_of(state, span_id, memo)
        memo.setdefault("began", {})[span_id] = (owner, plain(store))

    def _store_of(self, state: State, span_id: Any, memo: dict[str, Any]) -> tuple[str | None, Any]:
        """The store a span's events change: its nearest sub-task's, or the sample's."""
        spans = memo.get("spans", {})
        seen: set[str] = set()
        while isinstance(span_id, str) and span_id in spans and span_id not in seen:
            seen.add(span_id)
            kind, _, parent = spans[span_id]
            if kind == "subtask":
                sub = state.setdefault("subtasks", {}).setdefault(span_id, {"store": {}})
                store = sub.setdefault("store", {})
                return span_id, store
            span_id = parent
        return None, state["store"]

    def _patch_state(self, state: State, p: dict[str, Any]) -> None:
        try:
            result = apply_patch(state, p.get("changes"))
        except PatchFailed as exc:
            raise RuleViolation("divergence", f"the state's patch does not apply: {exc}") from None
        if result is not state:
            raise RuleViolation("divergence", "a state patch replaces the whole state")

    def _patch_store(
        self, state: State, p: dict[str, Any], memo: dict[str, Any], ctx: Context
    ) -> None:
        span_id = p.get("span_id")
        owner, store = self._store_of(state, span_id, memo)
        began = memo.get("began", {}).get(span_id)
        changes = p.get("changes")
        # the changes since the span began: applied to the store as it was then
        if began is not None and began[0] == owner:
            try:
                result = apply_patch(copy.deepcopy(began[1]), changes)
            except PatchFailed:
                result = None
        else:
            result = None
        if result is None:
            result = self._store_ahead(plain(store), changes, ctx)
        if not isinstance(result, Mapping):
            raise RuleViolation("divergence", "a store patch makes the store something else")
        if owner is None:
            state["store"] = result
        else:
            state["subtasks"][owner]["store"] = result

    @staticmethod
    def _store_ahead(store: dict[str, Any], changes: Any, ctx: Context) -> Any:
        """A span's store changes that do not apply to the store as the events
        gave it when the span began: the enclosing span had changed the store
        before, and its changes come only at its own end. Applied to the store
        as it is, each change that can be; said in a warning, as the store is
        known again at that enclosing span's end."""
        if not isinstance(changes, list):
            raise RuleViolation("divergence", "the store's changes are not a list")
        try:
            return apply_patch(copy.deepcopy(store), changes)
        except PatchFailed:
            pass
        skipped = []
        for op in changes:
            try:
                store = apply_patch(store, [op])
            except PatchFailed as exc:
                skipped.append(str(exc).removeprefix("operation 1 "))
        ctx.warn(
            "store changes made since an enclosing span began that its events have not "
            f"said yet: {'; '.join(skipped)} left out until that span ends"
        )
        return store

    def _model(self, state: State, p: dict[str, Any]) -> None:
        output = obj(p.get("output"))
        usage = obj(output.get("usage"))
        tokens = state.setdefault("tokens", new_tokens())
        for field, name in _TOKEN_FIELDS:
            value = usage.get(field)
            if type(value) is int:
                tokens[name] = tokens.get(name, 0) + value

    def _score(self, state: State, p: dict[str, Any], memo: dict[str, Any]) -> None:
        name = p.get("scorer") or memo.get("scorer") or "score"
        scores = state.setdefault("scores", {})
        scores[str(name)] = p.get("score")
        if not p.get("intermediate"):
            state["status"] = "scored"

    def _subtask(self, state: State, p: dict[str, Any]) -> None:
        subtasks = state.setdefault("subtasks", {})
        key = str(p.get("span_id") or p.get("uuid") or len(subtasks) + 1)
        entry = subtasks.setdefault(key, {"store": {}})
        entry.update({k: p.get(k) for k in ("name", "input", "result")})

    def _record(self, state: State, p: dict[str, Any], ctx: Context) -> State:
        if state["status"] == "new":
            ctx.warn(
                "the log keeps no events for this sample: its state is its record, nothing replayed"
            )
            fresh: State = {"status": "recorded", "tokens": new_tokens()}
            fresh["sample"] = {"id": p.get("id"), "epoch": p.get("epoch")}
            return self._take_record(fresh, p)
        wrong = differences(state, p)
        if wrong:
            why = "an error" if p.get("error") else ("a limit" if p.get("limit") else None)
            if why is None:
                raise RuleViolation(
                    "divergence",
                    "the events do not give the sample's record: " + "; ".join(wrong),
                )
            ctx.warn(
                f"the sample ended in {why} before its solver's state was written: the record "
                f"adds what no state event carried ({'; '.join(wrong)}); the state is the record"
            )
            added = len(p.get("messages") or []) - len(state.get("messages") or [])
            for message in (p.get("messages") or [])[-added:] if added > 0 else []:
                ctx.warn(f"the record adds {message_line(message)}")
        return self._take_record(state, p)

    def _take_record(self, state: State, p: dict[str, Any]) -> State:
        for key in _COMPARED:
            if key in p and (key != "store" or p.get(key) is not None):
                state[key] = p[key]
        if p.get("scores"):
            state["scores"] = p["scores"]
        if p.get("error"):
            state["error"] = p["error"]
            state["status"] = "error"
        elif p.get("limit"):
            state["limit"] = p["limit"]
            state["status"] = "limit"
        elif state["status"] != "recorded":
            state["status"] = "done"
        if p.get("model_usage"):
            state["model_usage"] = p["model_usage"]
        return state


REDUCER = InspectRules()
