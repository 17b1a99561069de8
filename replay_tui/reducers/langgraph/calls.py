"""A LangGraph thread's tool calls, as the app folds and shows calls.

A call is a model's tool call (an ``ai`` message's ``tool_calls``) and the
``ToolMessage`` that answers it (its ``tool_call_id``). A model that asks
for several tools at once writes them in one message, and ``ToolNode``
answers them in one write: those events are one call in the timeline (named
after the first), and the inspector shows each of its calls with its
result, or its error (a ``ToolMessage`` with ``status: "error"``), or that
none has come yet (pending).

The result is looked for in the state the inspector is given: the
checkpoint's values and the writes of the superstep under way (the app
shows the state after the cursor's event, and the state at the end of the
run as what was answered later).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from replay_tui.reducers.base import CallFacts, State
from replay_tui.state.persistent import thaw

if TYPE_CHECKING:
    from replay_tui.formats.envelope import Event


def messages_in(value: Any) -> list[Mapping[str, Any]]:
    """The LangChain messages of a written value (one, or a list)."""
    items = value if isinstance(value, Sequence) and not isinstance(value, str) else [value]
    return [m for m in items if isinstance(m, Mapping) and isinstance(m.get("type"), str)]


def one_line(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _requests(msgs: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The tool calls the ``ai`` messages make, in order."""
    out: list[Mapping[str, Any]] = []
    for m in msgs:
        calls = m.get("tool_calls") if m.get("type") == "ai" else None
        if isinstance(calls, Sequence) and not isinstance(calls, str):
            out += [c for c in calls if isinstance(c, Mapping) and isinstance(c.get("id"), str)]
    return out


def _answers(msgs: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ``ToolMessage``s, in order."""
    return [m for m in msgs if m.get("type") == "tool" and isinstance(m.get("tool_call_id"), str)]


def call_of(event: Event) -> str | None:
    """The call a write is part of: its first tool call, or the first call
    it answers (parallel calls fold under the first)."""
    if event.kind != "write":
        return None
    msgs = messages_in(event.payload.get("value"))
    for call in _requests(msgs):
        return str(call["id"])
    for answer in _answers(msgs):
        return str(answer["tool_call_id"])
    return None


def _tools_word(names: list[str]) -> str:
    if len(names) == 1 or len(set(names)) == 1:
        return names[0] + (f" ×{len(names)}" if len(names) > 1 else "")
    return f"{names[0]} +{len(names) - 1}"


def _args_word(args: Any) -> str:
    if isinstance(args, Mapping) and len(args) == 1:
        args = next(iter(args.values()))  # {'city': 'Paris'}: Paris
    return one_line(str(thaw(args) if isinstance(args, Mapping | list) else args), 60)


def call_facts(event: Event) -> CallFacts | None:
    if event.kind != "write":
        return None
    msgs = messages_in(event.payload.get("value"))
    requests = _requests(msgs)
    if requests:
        names = [str(c.get("name")) for c in requests]
        args = ", ".join(_args_word(c.get("args")) for c in requests if c.get("args"))
        return CallFacts(tool=_tools_word(names), arg=one_line(args, 60) or None)
    answers = _answers(msgs)
    if answers:
        failed = any(m.get("status") == "error" for m in answers)
        names = [str(m.get("name")) for m in answers if isinstance(m.get("name"), str)]
        return CallFacts(tool=_tools_word(names) if names else None, status=_status(failed))
    if event.payload.get("channel") == "__error__":
        return CallFacts(tool=str(event.payload.get("task")), status="error")
    return None


def _status(failed: bool) -> str:
    return "error" if failed else "ok"


def _known_messages(state: State) -> Iterator[Mapping[str, Any]]:
    """Every message the state holds: the checkpoint's values, then the
    writes of the superstep under way."""
    values = state.get("values")
    if isinstance(values, Mapping):
        for value in values.values():
            if isinstance(value, Sequence) and not isinstance(value, str):
                yield from messages_in(value)
    writes = state.get("writes")
    if isinstance(writes, Sequence):
        for w in writes:
            if isinstance(w, Mapping):
                yield from messages_in(w.get("value"))


def record_for(state: State, event: Event) -> tuple[str, Any] | None:
    """What the inspector shows beside a call's event, from ``state``: each
    call's tool, arguments and result (or error, or pending)."""
    if event.kind != "write":
        return None
    msgs = messages_in(event.payload.get("value"))
    requests, answers = _requests(msgs), _answers(msgs)
    if not requests and not answers:
        return None
    known = list(_known_messages(state))
    pairs: list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
    if requests:
        by_id = {str(m["tool_call_id"]): m for m in _answers(known)}
        pairs = [(c, by_id.get(str(c["id"]))) for c in requests]
    else:
        asked = {str(c["id"]): c for c in _requests(known)}
        pairs = [(asked.get(str(m["tool_call_id"])), m) for m in answers]
    calls = [_call(request, answer) for request, answer in pairs]
    if len(calls) == 1:
        c = calls[0]
        if c["status"] == "pending":
            return f"{c['tool']} · no result yet: pending", c
        return f"{c['tool']} result · {c['status']}", c
    said = ", ".join(f"{c['tool']} {c['status']}" for c in calls)
    return f"{len(calls)} calls · {said}", calls


def _call(request: Mapping[str, Any] | None, answer: Mapping[str, Any] | None) -> dict[str, Any]:
    """One call as the inspector shows it."""
    if request is not None:
        cid, tool = request.get("id"), request.get("name")
    else:
        assert answer is not None
        cid, tool = answer.get("tool_call_id"), answer.get("name")
    out: dict[str, Any] = {"call_id": cid, "tool": tool}
    if request is not None:
        out["args"] = thaw(request.get("args"))
    if answer is None:
        out["status"] = "pending"
        return out
    failed = answer.get("status") == "error"
    out["status"] = _status(failed)
    out["error" if failed else "result"] = thaw(answer.get("content"))
    if answer.get("artifact") is not None:
        out["artifact"] = thaw(answer.get("artifact"))
    return out
