"""The ``temporal`` rules in words: what an event did (the diff pane), its row
on the timeline, the call it is part of, and the record an event points at."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.reducers.base import CallFacts, State, StateView
from replay_tui.reducers.temporal.history import (
    CALL_OPENERS,
    CALL_REFS,
    CLOSED,
    completed_later,
    event_id,
    facts_of_call,
    name_of,
)

if TYPE_CHECKING:
    from replay_tui.envelope import Event


class TemporalWords:
    """What :class:`replay_tui.reducers.temporal.rules.TemporalRules` say of
    an event, apart from what they do with it."""

    def explain(self, before: StateView, event: Event, after: StateView) -> str:
        """The event in words, with what it changed, and the workflow task
        that commanded it when that was completed after it (a command
        buffered while an update or query was handled)."""
        words = self._explain(before, event, after)
        later = completed_later(event)
        return f"{words}; completed by the workflow task at event {later}" if later else words

    def _explain(self, before: StateView, event: Event, after: StateView) -> str:
        kind = event.kind
        p = event.payload
        if kind == "WorkflowExecutionStarted":
            wf = after["workflow"]
            return f"{kind}: workflow {wf['type']} starts, status running"
        if kind in CLOSED:
            return f"{kind}: status {before['status']} -> {after['status']}"
        if kind == "ActivityTaskScheduled":
            act = after["activities"][str(event.seq)]
            return f"{kind}: activity {act['type']} (id {act['activity_id']}) scheduled"
        sid = event_id(p.get("scheduledEventId"))
        if kind.startswith("ActivityTask") and sid in after["activities"]:
            act = after["activities"][sid]
            return f"{kind}: activity {act['type']} ({sid}) is {act['status']}"
        if kind.startswith("Timer"):
            timer = after["timers"].get(str(p.get("timerId")), {})
            return f"{kind}: timer {p.get('timerId')} {timer.get('status')}"
        if kind == "WorkflowExecutionSignaled":
            return f"{kind}: signal {p.get('signalName')!r} received"
        return kind

    def call_of(self, event: Event) -> str | None:
        """A call is an activity, a timer, a child workflow, a Nexus
        operation or a workflow task: the event that opened it and the
        events that name it (``scheduledEventId`` and the like)."""
        kind = event.kind
        opener = CALL_OPENERS.get(kind)
        if opener is not None:
            return f"{opener} {event.seq}"
        for prefix, field, name in CALL_REFS:
            if kind.startswith(prefix):
                ref = event_id(event.payload.get(field))
                return f"{name} {ref}" if ref is not None else None
        return None

    def call_facts(self, event: Event) -> CallFacts | None:
        return facts_of_call(event.kind, event.payload)

    def row_summary(self, event: Event) -> str | None:
        """One line for the timeline, as Temporal's UI sums an event up:
        activity type and id, timer and duration, signal or update name,
        child workflow type, failure message."""
        p = event.payload
        kind = event.kind
        failure = p.get("failure")
        message = failure.get("message") if isinstance(failure, dict) else None
        parts: list[Any]
        if kind == "WorkflowExecutionStarted":
            parts = [name_of(p.get("workflowType")), "on", name_of(p.get("taskQueue"))]
        elif kind == "ActivityTaskScheduled":
            parts = [name_of(p.get("activityType")), f"#{p.get('activityId')}"]
        elif kind.startswith("ActivityTask"):
            parts = [f"activity of event {p.get('scheduledEventId')}"]
            if kind == "ActivityTaskStarted":
                parts.append(f"attempt {p.get('attempt')}")
        elif kind == "TimerStarted":
            parts = [f"timer {p.get('timerId')}", "for", p.get("startToFireTimeout")]
        elif kind.startswith("Timer"):
            parts = [f"timer {p.get('timerId')}"]
        elif kind == "WorkflowExecutionSignaled":
            parts = [f"signal {p.get('signalName')}"]
        elif kind.startswith("WorkflowExecutionUpdate"):
            request = p.get("acceptedRequest") or p.get("request") or {}
            call = request.get("input") if isinstance(request, dict) else None
            name = call.get("name") if isinstance(call, dict) else None
            meta = p.get("meta") or (request.get("meta") if isinstance(request, dict) else None)
            uid = meta.get("updateId") if isinstance(meta, dict) else None
            parts = [f"update {name or uid or p.get('protocolInstanceId') or ''}".strip()]
        elif "ChildWorkflowExecution" in kind:
            parts = ["child", name_of(p.get("workflowType"))]
        elif kind.startswith("WorkflowTask"):
            parts = ["workflow task"]
            if "attempt" in p:
                parts.append(f"attempt {p.get('attempt')}")
        elif kind == "MarkerRecorded":
            parts = [f"marker {p.get('markerName')}"]
        else:
            parts = []
        if message:
            parts.append(f"failed: {message}")
        words = [str(x) for x in parts if x not in (None, "")]
        return " ".join(words) or None

    def record_for(self, state: State, event: Event) -> tuple[str, Any] | None:
        """What the inspector shows beside ``event``, from ``state`` (the last):
        for an activity its input and result, Temporal's receipts."""
        found = self._record_for(state, event)
        later = completed_later(event)
        if found is None or not later:
            return found
        return f"{found[0]} · completed by the workflow task at event {later}", found[1]

    def _record_for(self, state: State, event: Event) -> tuple[str, Any] | None:
        kind = event.kind
        p = event.payload
        if kind.startswith("ActivityTask"):
            sid = (
                str(event.seq)
                if kind == "ActivityTaskScheduled"
                else event_id(p.get("scheduledEventId"))
            )
            act = state["activities"].get(sid or "")
            if act is not None:
                return f"activity {act['type']} · scheduled at event {sid}", act
        if "ChildWorkflowExecution" in kind:
            iid = (
                str(event.seq)
                if kind.endswith("Initiated")
                else event_id(p.get("initiatedEventId"))
            )
            child = state["children"].get(iid or "")
            if child is not None:
                return f"child workflow {child['type']} · initiated at event {iid}", child
        if kind.startswith("NexusOperation"):
            sid = (
                str(event.seq)
                if kind.endswith("Scheduled")
                else event_id(p.get("scheduledEventId"))
            )
            op = state["nexus"].get(sid or "")
            if op is not None:
                return f"Nexus operation {op['operation']} · scheduled at event {sid}", op
        if kind.startswith("Timer"):
            timer = state["timers"].get(str(p.get("timerId")))
            if timer is not None:
                return f"timer {p.get('timerId')}", timer
        if kind.startswith("WorkflowExecutionUpdate"):
            for update_id, update in state["updates"].items():
                if update_id in str(p):
                    return f"update {update['name']} · {update_id}", update
        if kind == "WorkflowExecutionStarted" or kind in CLOSED:
            return f"workflow {state['workflow']['type'] if state['workflow'] else ''}", {
                "status": state["status"],
                "workflow": state["workflow"],
                "result": state["result"],
                "failure": state["failure"],
            }
        return None
