"""The ``inspect_ai`` rules in words: an event's row, what it did, the call
it is part of (a model call, a tool call), and what the record says that the
events did not."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.reducers.base import CallFacts, State, StateView
from replay_tui.reducers.inspect_ai.patch import obj, plain

if TYPE_CHECKING:
    from replay_tui.envelope import Event

_SHORT = 60


def text_of(content: Any) -> str:
    """A message's content as text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text") or ""
            for part in content
            if isinstance(part, dict) and part.get("type", "text") == "text"
        )
    return ""


def _short(text: str, width: int = _SHORT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def message_line(message: Any) -> str:
    """``assistant: "Reply 1 to..."`` (and its tool calls)."""
    if not isinstance(message, dict):
        return repr(message)[:_SHORT]
    said = f"{message.get('role')}: {_short(text_of(message.get('content')))!r}"
    calls = message.get("tool_calls") or []
    names = [c.get("function") for c in calls if isinstance(c, dict)]
    return f"{said} calling {', '.join(map(str, names))}" if names else said


def _first_message_difference(got: list[Any], want: list[Any]) -> str:
    for i, (a, b) in enumerate(zip(got, want, strict=False)):
        if a != b:
            keys = (
                sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
                if isinstance(a, dict) and isinstance(b, dict)
                else []
            )
            fields = f" ({', '.join(keys)})" if keys else ""
            return (
                f"message {i} differs{fields}: events {message_line(a)}, record {message_line(b)}"
            )
    return f"the events give {len(got)} messages, the record {len(want)}"


def differences(state: State, record: dict[str, Any]) -> list[str]:
    """Where the state the events gave is not the record: messages, output, store."""
    found: list[str] = []
    state = {k: plain(state.get(k)) for k in ("messages", "output", "store")}
    got = state.get("messages") or []
    want = record.get("messages") or []
    if not isinstance(want, list):  # a damaged record: nothing to compare message by message
        found.append(f"the record's messages are {type(want).__name__} {want!r:.40}, not a list")
    elif got != want:
        found.append(_first_message_difference(got, want))
    if "output" in record and state.get("output") != record.get("output"):
        found.append("the output differs")
    store = record.get("store")
    if store is not None and not isinstance(store, dict):
        found.append(f"the record's store is {type(store).__name__} {store!r:.40}, not an object")
    elif store is not None and state.get("store") != store:
        keys = sorted(
            k
            for k in set(state.get("store") or {}) | set(store)
            if (state.get("store") or {}).get(k) != store.get(k)
        )
        found.append(f"the store differs at {', '.join(keys[:5])}")
    return found


class InspectWords:
    """What :class:`replay_tui.reducers.inspect_ai.rules.InspectRules` say of
    an event, apart from what they do with it."""

    def explain(self, before: StateView, event: Event, after: StateView) -> str:
        kind = event.kind
        p = obj(event.payload)
        if kind == "sample_init":
            return f"sample_init: {len(after.get('messages') or [])} message(s) to start with"
        if kind == "state":
            was, now = len(before.get("messages") or []), len(after.get("messages") or [])
            return f"state: {len(p.get('changes') or [])} change(s); {was} -> {now} messages"
        if kind == "store":
            return f"store: {len(p.get('changes') or [])} change(s)"
        if kind == "record":
            return f"record: the log's own record of the sample; status {after.get('status')}"
        return kind

    def call_of(self, event: Event) -> str | None:
        """A model event and a tool event are each a call of their own."""
        p = obj(event.payload)
        if event.kind == "tool":
            return f"tool {p.get('id') or event.seq}"
        if event.kind == "model":
            return f"model {p.get('uuid') or event.seq}"
        return None

    def call_facts(self, event: Event) -> CallFacts | None:
        p = obj(event.payload)
        if event.kind == "tool":
            error = p.get("error")
            return CallFacts(
                tool=str(p.get("function")),
                arg=_short(str(p.get("arguments")), 40),
                status="error" if error else "ok",
            )
        if event.kind == "model":
            obj(p.get("output"))
            return CallFacts(tool=str(p.get("model")), status="error" if p.get("error") else "ok")
        return None

    def record_for(self, state: State, event: Event) -> tuple[str, Any] | None:
        """What the inspector shows beside a call: a tool call's arguments and
        result (or error), a model call's output, usage and input size."""
        p = obj(event.payload)
        if event.kind == "tool":
            shown: dict[str, Any] = {
                k: p.get(k) for k in ("function", "arguments", "result") if k in p
            }
            if p.get("error"):
                shown["error"] = p["error"]
            return f"tool call {p.get('function')} · {p.get('id')}", shown
        if event.kind == "model":
            output = obj(p.get("output"))
            choices = output.get("choices") or [{}]
            message = obj(obj(choices[0]).get("message"))
            shown = {
                "completion": output.get("completion"),
                "tool_calls": message.get("tool_calls"),
                "stop_reason": obj(choices[0]).get("stop_reason"),
                "usage": output.get("usage"),
                "input_messages": len(p.get("input") or []),
            }
            if p.get("error"):
                shown["error"] = p["error"]
            return f"model call {p.get('model')}", {k: v for k, v in shown.items() if v is not None}
        return None

    def row_summary(self, event: Event) -> str | None:
        p = obj(event.payload)
        kind = event.kind
        if kind in ("span_begin", "span_end", "step"):
            return " ".join(str(x) for x in (p.get("type"), p.get("name"), p.get("action")) if x)
        if kind == "model":
            output = obj(p.get("output"))
            return f"{p.get('model')}: {_short(str(output.get('completion') or ''))!r}"
        if kind == "tool":
            return f"{p.get('function')}({_short(str(p.get('arguments')), 40)})"
        if kind == "score":
            score = obj(p.get("score"))
            return f"{p.get('scorer') or 'score'} = {score.get('value')!r}"
        if kind in ("store", "state"):
            paths = [c.get("path") for c in p.get("changes") or [] if isinstance(c, dict)]
            return _short(", ".join(str(x) for x in paths))
        if kind == "error":
            error = obj(p.get("error"))
            return _short(str(error.get("message")))
        if kind in ("info", "logger"):
            return _short(str(p.get("data") or p.get("message")))
        return None
