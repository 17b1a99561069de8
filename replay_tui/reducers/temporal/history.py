"""What a Temporal history's events say, for the ``temporal`` rules: the kinds
they know, how each kind of call opens and ends, the values and failures in
a payload, and the state before the first event."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.errors import RuleViolation
from replay_tui.reducers.base import CallFacts, State

if TYPE_CHECKING:
    from replay_tui.envelope import Event

CLOSED = {
    "WorkflowExecutionCompleted": "completed",
    "WorkflowExecutionFailed": "failed",
    "WorkflowExecutionTimedOut": "timed_out",
    "WorkflowExecutionCanceled": "cancelled",
    "WorkflowExecutionTerminated": "terminated",
    "WorkflowExecutionContinuedAsNew": "continued_as_new",
}
ACTIVITY_END = {
    "ActivityTaskCompleted": "completed",
    "ActivityTaskFailed": "failed",
    "ActivityTaskTimedOut": "timed_out",
    "ActivityTaskCanceled": "cancelled",
}
CHILD_END = {
    "ChildWorkflowExecutionCompleted": "completed",
    "ChildWorkflowExecutionFailed": "failed",
    "ChildWorkflowExecutionCanceled": "cancelled",
    "ChildWorkflowExecutionTimedOut": "timed_out",
    "ChildWorkflowExecutionTerminated": "terminated",
}
NEXUS_END = {
    "NexusOperationCompleted": "completed",
    "NexusOperationFailed": "failed",
    "NexusOperationCanceled": "cancelled",
    "NexusOperationTimedOut": "timed_out",
}
QUIET = frozenset(
    {
        # known, legal, and nothing in them changes this state
        "WorkflowPropertiesModifiedExternally",
        "ActivityPropertiesModifiedExternally",
        "WorkflowExecutionOptionsUpdated",
        "NexusOperationCancelRequestCompleted",
        "NexusOperationCancelRequestFailed",
    }
)
KINDS = frozenset(
    {
        "WorkflowExecutionStarted",
        *CLOSED,
        "WorkflowExecutionCancelRequested",
        "WorkflowTaskScheduled",
        "WorkflowTaskStarted",
        "WorkflowTaskCompleted",
        "WorkflowTaskFailed",
        "WorkflowTaskTimedOut",
        "ActivityTaskScheduled",
        "ActivityTaskStarted",
        "ActivityTaskCancelRequested",
        *ACTIVITY_END,
        "TimerStarted",
        "TimerFired",
        "TimerCanceled",
        "WorkflowExecutionSignaled",
        "WorkflowExecutionUpdateAdmitted",
        "WorkflowExecutionUpdateAccepted",
        "WorkflowExecutionUpdateRejected",
        "WorkflowExecutionUpdateCompleted",
        "StartChildWorkflowExecutionInitiated",
        "StartChildWorkflowExecutionFailed",
        "ChildWorkflowExecutionStarted",
        *CHILD_END,
        "SignalExternalWorkflowExecutionInitiated",
        "SignalExternalWorkflowExecutionFailed",
        "ExternalWorkflowExecutionSignaled",
        "RequestCancelExternalWorkflowExecutionInitiated",
        "RequestCancelExternalWorkflowExecutionFailed",
        "ExternalWorkflowExecutionCancelRequested",
        "MarkerRecorded",
        "UpsertWorkflowSearchAttributes",
        "WorkflowPropertiesModified",
        "NexusOperationScheduled",
        "NexusOperationStarted",
        "NexusOperationCancelRequested",
        *NEXUS_END,
        *QUIET,
    }
)


def illegal(message: str) -> RuleViolation:
    """An event Temporal's server would never write: ``illegal_transition``."""
    return RuleViolation("illegal_transition", message)


def completed_later(event: Event) -> str | None:
    """The workflow task completed *after* ``event`` that commanded it: Temporal
    writes commands buffered during an update with that later id. Kept as
    data, never a ``parent_seq``."""
    later = event_id(event.payload.get("workflowTaskCompletedEventId"))
    return later if later is not None and int(later) > event.seq else None


def stricter(message: str) -> str:
    """A check stricter than Temporal's own invariants: a ``rule_warning``."""
    return f"{message} (stricter than Temporal: a warning, not an error)"


def event_id(value: Any) -> str | None:
    """An event id as the state's keys hold it ("7"), or None if absent/0."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if value > 0 else None
    if isinstance(value, str) and value.isdigit() and value.strip("0"):
        return str(int(value))
    return None


DECODED_KEYS = frozenset({"encoding", "metadata", "value", "text", "base64", "size", "note"})


def started_by(
    table: dict[str, Any], key: str | None, kind: str, what: str, verb: str
) -> dict[str, Any]:
    """The entry ``kind`` answers (an activity by its scheduled event id, ...),
    or ``illegal_transition``: an event cannot answer one never begun."""
    entry = table.get(key) if key else None
    if entry is None:
        raise illegal(f"{kind} for {what} {key}, which was never {verb}")
    return entry  # type: ignore[no-any-return]


def value_of(payload: Any) -> Any:
    """A payload's value: a decoded one's JSON or text (bytes stay described);
    anything else as it is, e.g. the plain JSON of the Temporal CLI's
    "payload shorthand" output, even when it has a "value" key of its own."""
    if isinstance(payload, dict) and "encoding" in payload and payload.keys() <= DECODED_KEYS:
        if "value" in payload:
            return payload["value"]
        if "text" in payload:
            return payload["text"]
    return payload


def values_of(payloads: Any) -> list[Any]:
    """``{"payloads": [...]}`` as the list of its values (arguments)."""
    if isinstance(payloads, dict):
        items = payloads.get("payloads")
        if isinstance(items, list):
            return [value_of(p) for p in items]
    return []


def result_of(payloads: Any) -> Any:
    """A result: the one value, or the list when there are several (or none)."""
    values = values_of(payloads)
    return values[0] if len(values) == 1 else (values or None)


def name_of(obj: Any) -> Any:
    return obj.get("name") if isinstance(obj, dict) else None


def failure_of(failure: Any) -> Any:
    """The parts of a Temporal Failure a reader needs."""
    if not isinstance(failure, dict):
        return failure
    out: dict[str, Any] = {"message": failure.get("message")}
    for info in ("applicationFailureInfo", "timeoutFailureInfo", "canceledFailureInfo"):
        detail = failure.get(info)
        if isinstance(detail, dict):
            out["kind"] = info.removesuffix("FailureInfo")
            if "type" in detail:
                out["type"] = detail["type"]
            if "timeoutType" in detail:
                out["timeout"] = detail["timeoutType"]
            if detail.get("nonRetryable"):
                out["non_retryable"] = True
    if failure.get("cause") is not None:
        out["cause"] = failure_of(failure["cause"])
    return out


def fields_of(obj: Any, key: str) -> dict[str, Any]:
    """``{key: {"fields"|"indexedFields": {...}}}`` as a plain dict of values."""
    inner = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(inner, dict):
        return {}
    fields = inner.get("fields", inner.get("indexedFields"))
    if not isinstance(fields, dict):
        return {}
    return {k: value_of(v) for k, v in fields.items()}


#: The event that opens a call of Temporal's (its eventId names the call) ...
CALL_OPENERS = {
    "ActivityTaskScheduled": "activity",
    "TimerStarted": "timer",
    "StartChildWorkflowExecutionInitiated": "child",
    "WorkflowTaskScheduled": "workflow task",
    "NexusOperationScheduled": "nexus",
}
#: ... and, by kind prefix, the field with which its other events name it.
CALL_REFS = (
    ("ActivityTask", "scheduledEventId", "activity"),
    ("Timer", "startedEventId", "timer"),
    ("ChildWorkflowExecution", "initiatedEventId", "child"),
    ("StartChildWorkflowExecution", "initiatedEventId", "child"),
    ("WorkflowTask", "scheduledEventId", "workflow task"),
    ("NexusOperation", "scheduledEventId", "nexus"),
)
CALL_KINDS = tuple(prefix for prefix, _, _ in CALL_REFS)
#: How an event that ends a call says it ended, by the kind's last word.
ENDINGS = (
    ("Completed", "ok"),
    ("Fired", "ok"),
    ("Failed", "error"),
    ("TimedOut", "timed out"),
    ("Canceled", "canceled"),
    ("Terminated", "terminated"),
)


def facts_of_call(kind: str, p: dict[str, Any]) -> CallFacts | None:
    if kind == "ActivityTaskScheduled":
        return CallFacts(tool=str(name_of(p.get("activityType"))), arg=f"#{p.get('activityId')}")
    if kind == "TimerStarted":
        return CallFacts(tool="timer", arg=str(p.get("startToFireTimeout")))
    if kind == "StartChildWorkflowExecutionInitiated":
        return CallFacts(tool=str(name_of(p.get("workflowType"))), arg=str(p.get("workflowId")))
    if kind == "WorkflowTaskScheduled":
        return CallFacts(tool="workflow task")
    if kind == "NexusOperationScheduled":
        return CallFacts(tool=str(p.get("operation")), arg=str(p.get("service")))
    if not kind.startswith(CALL_KINDS):
        return None
    for word, status in ENDINGS:
        if kind.endswith(word):
            return CallFacts(status=status)
    return None


def new_state() -> State:
    """What a workflow is before its first event."""
    return {
        "status": "new",
        "workflow": None,
        "result": None,
        "failure": None,
        "cancel_requested": False,
        "workflow_tasks": {
            "scheduled": 0,
            "completed": 0,
            "failed": 0,
            "timed_out": 0,
            "current": None,
            "last_failure": None,
        },
        "activities": {},
        "timers": {},
        "signals": [],
        "updates": {},
        "children": {},
        "nexus": {},
        "external": {},
        "markers": [],
        "search_attributes": {},
        "memo": {},
    }
