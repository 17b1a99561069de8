"""The ``temporal`` rules: a Temporal workflow's state after each history event.

Temporal's Web UI lists a history's events; what it never shows is the state
they add up to. These rules fold the events (as :mod:`replay_tui.temporal`
imports them) into: the workflow's status, type, input and result; its
activities by scheduled event id (type, input, attempt, result or failure);
timers, signals, updates, child workflows, Nexus operations, external
signals and cancels, markers; workflow task counts and failures; search
attributes and memo.

The rules refuse what Temporal's server never writes (its invariants: an
activity completes only once scheduled, a timer fires only once started,
nothing follows the event that closed the workflow): ``illegal_transition`` at
that event. A check stricter than Temporal (what the rules doubt but the
server may write, e.g. a cancel request for an activity already ended) is a
``rule_warning`` through ``ctx.warn``, never an error. An event type these
rules do not know is ``unknown_kind`` unless flagged ``workerMayIgnore``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.errors import RuleViolation
from replay_tui.reducers.base import CallFacts, Context, State

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
_ACTIVITY_END = {
    "ActivityTaskCompleted": "completed",
    "ActivityTaskFailed": "failed",
    "ActivityTaskTimedOut": "timed_out",
    "ActivityTaskCanceled": "cancelled",
}
_CHILD_END = {
    "ChildWorkflowExecutionCompleted": "completed",
    "ChildWorkflowExecutionFailed": "failed",
    "ChildWorkflowExecutionCanceled": "cancelled",
    "ChildWorkflowExecutionTimedOut": "timed_out",
    "ChildWorkflowExecutionTerminated": "terminated",
}
_NEXUS_END = {
    "NexusOperationCompleted": "completed",
    "NexusOperationFailed": "failed",
    "NexusOperationCanceled": "cancelled",
    "NexusOperationTimedOut": "timed_out",
}
_QUIET = frozenset(
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
        *_ACTIVITY_END,
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
        *_CHILD_END,
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
        *_NEXUS_END,
        *_QUIET,
    }
)


def _illegal(message: str) -> RuleViolation:
    """An event Temporal's server would never write: ``illegal_transition``."""
    return RuleViolation("illegal_transition", message)


def _completed_later(event: Event) -> str | None:
    """The workflow task completed *after* ``event`` that commanded it: Temporal
    writes commands buffered during an update with that later id. Kept as
    data, never a ``parent_seq``."""
    later = _id(event.payload.get("workflowTaskCompletedEventId"))
    return later if later is not None and int(later) > event.seq else None


def _stricter(message: str) -> str:
    """A check stricter than Temporal's own invariants: a ``rule_warning``."""
    return f"{message} (stricter than Temporal: a warning, not an error)"


def _id(value: Any) -> str | None:
    """An event id as the state's keys hold it ("7"), or None if absent/0."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if value > 0 else None
    if isinstance(value, str) and value.isdigit() and value.strip("0"):
        return str(int(value))
    return None


_DECODED_KEYS = frozenset({"encoding", "metadata", "value", "text", "base64", "size", "note"})


def _started_by(
    table: dict[str, Any], key: str | None, kind: str, what: str, verb: str
) -> dict[str, Any]:
    """The entry ``kind`` answers (an activity by its scheduled event id, ...),
    or ``illegal_transition``: an event cannot answer one never begun."""
    entry = table.get(key) if key else None
    if entry is None:
        raise _illegal(f"{kind} for {what} {key}, which was never {verb}")
    return entry  # type: ignore[no-any-return]


def _value(payload: Any) -> Any:
    """A payload's value: a decoded one's JSON or text (bytes stay described);
    anything else as it is, e.g. the plain JSON of the Temporal CLI's
    "payload shorthand" output, even when it has a "value" key of its own."""
    if isinstance(payload, dict) and "encoding" in payload and payload.keys() <= _DECODED_KEYS:
        if "value" in payload:
            return payload["value"]
        if "text" in payload:
            return payload["text"]
    return payload


def _values(payloads: Any) -> list[Any]:
    """``{"payloads": [...]}`` as the list of its values (arguments)."""
    if isinstance(payloads, dict):
        items = payloads.get("payloads")
        if isinstance(items, list):
            return [_value(p) for p in items]
    return []


def _result(payloads: Any) -> Any:
    """A result: the one value, or the list when there are several (or none)."""
    values = _values(payloads)
    return values[0] if len(values) == 1 else (values or None)


def _name(obj: Any) -> Any:
    return obj.get("name") if isinstance(obj, dict) else None


def _failure(failure: Any) -> Any:
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
        out["cause"] = _failure(failure["cause"])
    return out


def _fields(obj: Any, key: str) -> dict[str, Any]:
    """``{key: {"fields"|"indexedFields": {...}}}`` as a plain dict of values."""
    inner = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(inner, dict):
        return {}
    fields = inner.get("fields", inner.get("indexedFields"))
    if not isinstance(fields, dict):
        return {}
    return {k: _value(v) for k, v in fields.items()}


#: The event that opens a call of Temporal's (its eventId names the call) ...
_CALL_OPENERS = {
    "ActivityTaskScheduled": "activity",
    "TimerStarted": "timer",
    "StartChildWorkflowExecutionInitiated": "child",
    "WorkflowTaskScheduled": "workflow task",
    "NexusOperationScheduled": "nexus",
}
#: ... and, by kind prefix, the field with which its other events name it.
_CALL_REFS = (
    ("ActivityTask", "scheduledEventId", "activity"),
    ("Timer", "startedEventId", "timer"),
    ("ChildWorkflowExecution", "initiatedEventId", "child"),
    ("StartChildWorkflowExecution", "initiatedEventId", "child"),
    ("WorkflowTask", "scheduledEventId", "workflow task"),
    ("NexusOperation", "scheduledEventId", "nexus"),
)
_CALL_KINDS = tuple(prefix for prefix, _, _ in _CALL_REFS)
#: How an event that ends a call says it ended, by the kind's last word.
_ENDINGS = (
    ("Completed", "ok"),
    ("Fired", "ok"),
    ("Failed", "error"),
    ("TimedOut", "timed out"),
    ("Canceled", "canceled"),
    ("Terminated", "terminated"),
)


def _call_facts(kind: str, p: dict[str, Any]) -> CallFacts | None:
    if kind == "ActivityTaskScheduled":
        return CallFacts(tool=str(_name(p.get("activityType"))), arg=f"#{p.get('activityId')}")
    if kind == "TimerStarted":
        return CallFacts(tool="timer", arg=str(p.get("startToFireTimeout")))
    if kind == "StartChildWorkflowExecutionInitiated":
        return CallFacts(tool=str(_name(p.get("workflowType"))), arg=str(p.get("workflowId")))
    if kind == "WorkflowTaskScheduled":
        return CallFacts(tool="workflow task")
    if kind == "NexusOperationScheduled":
        return CallFacts(tool=str(p.get("operation")), arg=str(p.get("service")))
    if not kind.startswith(_CALL_KINDS):
        return None
    for word, status in _ENDINGS:
        if kind.endswith(word):
            return CallFacts(status=status)
    return None


def _initial_state() -> State:
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


class TemporalRules:
    name = "temporal"
    version = "1.1.0"
    kinds = KINDS
    #: Temporal writes ActivityTaskStarted when the attempt ends, stamped with
    #: the time it started: earlier than the events before it, and rightly so.
    late_ts_kinds = frozenset({"ActivityTaskStarted"})

    def initial_state(self) -> State:
        return _initial_state()

    def ignorable(self, event: Event) -> bool:
        """An event type these rules do not know, flagged ``workerMayIgnore``:
        Temporal's SDKs skip it on replay (how servers add event types)."""
        return event.fields.get("workerMayIgnore") is True

    def summary(self, state: State) -> str:
        return str(state["status"])

    def still_open(self, state: State) -> list[str]:
        """What a running workflow still waits for: activities, timers,
        children, Nexus operations and updates not yet resolved."""
        if state["status"] != "running":
            return []
        found = [
            f"activity {key} ({act.get('type')}) {act['status']}"
            for key, act in state["activities"].items()
            if act["status"] in ("scheduled", "started")
        ]
        found += [
            f"timer {key} started" for key, t in state["timers"].items() if t["status"] == "started"
        ]
        found += [
            f"child workflow {key} {child['status']}"
            for key, child in state["children"].items()
            if child["status"] in ("initiated", "started")
        ]
        found += [
            f"Nexus operation {key} {op['status']}"
            for key, op in state["nexus"].items()
            if op["status"] in ("scheduled", "started")
        ]
        found += [
            f"update {key} {update['status']}"
            for key, update in state["updates"].items()
            if update["status"] not in ("completed", "rejected")
        ]
        return found

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        kind = event.kind
        p = event.payload
        status = state["status"]
        if kind == "WorkflowExecutionStarted":
            if status != "new":
                raise _illegal("WorkflowExecutionStarted again: the workflow already started")
            return self._started(state, p)
        if status == "new":
            raise _illegal(f"{kind} before WorkflowExecutionStarted")
        if status != "running":
            raise _illegal(f"{kind} after the workflow closed ({status})")
        if kind in CLOSED:
            return self._closed(state, kind, p)
        if kind.startswith("WorkflowTask"):
            return self._workflow_task(state, kind, p, event.seq)
        if kind.startswith("ActivityTask"):
            return self._activity(state, kind, p, event.seq, ctx)
        if kind.startswith("Timer"):
            return self._timer(state, kind, p, event.seq)
        if kind.startswith("WorkflowExecutionUpdate"):
            return self._update(state, kind, p, event.seq, ctx)
        if "ChildWorkflowExecution" in kind:
            return self._child(state, kind, p, event.seq)
        if kind.startswith("NexusOperation") and kind not in _QUIET:
            return self._nexus(state, kind, p, event.seq, ctx)
        if "ExternalWorkflowExecution" in kind:
            return self._external(state, kind, p, event.seq)
        if kind == "WorkflowExecutionSignaled":
            state["signals"].append(
                {"seq": event.seq, "name": p.get("signalName"), "input": _values(p.get("input"))}
            )
        elif kind == "WorkflowExecutionCancelRequested":
            state["cancel_requested"] = True
        elif kind == "MarkerRecorded":
            details = p.get("details")
            state["markers"].append(
                {
                    "seq": event.seq,
                    "name": p.get("markerName"),
                    "details": {k: _values(v) for k, v in details.items()}
                    if isinstance(details, dict)
                    else None,
                }
            )
        elif kind == "UpsertWorkflowSearchAttributes":
            state["search_attributes"].update(_fields(p, "searchAttributes"))
        elif kind == "WorkflowPropertiesModified":
            state["memo"].update(_fields(p, "upsertedMemo"))
        return state

    def _started(self, state: State, p: dict[str, Any]) -> State:
        state["status"] = "running"
        parent = p.get("parentWorkflowExecution")
        state["workflow"] = {
            "type": _name(p.get("workflowType")),
            "id": p.get("workflowId"),
            "task_queue": _name(p.get("taskQueue")),
            "input": _values(p.get("input")),
            "attempt": p.get("attempt", 1),
            "parent": parent.get("workflowId") if isinstance(parent, dict) else None,
            "cron": p.get("cronSchedule") or None,
            "continued_from": p.get("continuedExecutionRunId") or None,
        }
        state["memo"] = _fields(p, "memo")
        state["search_attributes"] = _fields(p, "searchAttributes")
        return state

    def _closed(self, state: State, kind: str, p: dict[str, Any]) -> State:
        state["status"] = CLOSED[kind]
        if kind == "WorkflowExecutionCompleted":
            state["result"] = _result(p.get("result"))
        elif kind == "WorkflowExecutionFailed":
            state["failure"] = _failure(p.get("failure"))
        elif kind == "WorkflowExecutionTerminated":
            state["failure"] = {"message": p.get("reason"), "kind": "terminated"}
        elif kind == "WorkflowExecutionTimedOut":
            state["failure"] = {"message": "workflow timed out", "kind": "timeout"}
        elif kind == "WorkflowExecutionContinuedAsNew":
            state["result"] = {
                "new_run_id": p.get("newExecutionRunId"),
                "input": _values(p.get("input")),
            }
        return state

    def _workflow_task(self, state: State, kind: str, p: dict[str, Any], seq: int) -> State:
        tasks = state["workflow_tasks"]
        current = tasks["current"]
        if kind == "WorkflowTaskScheduled":
            if current is not None and current["started"] is not None:
                raise _illegal(
                    f"WorkflowTaskScheduled while workflow task {current['scheduled']} is running"
                )
            tasks["scheduled"] += 1
            tasks["current"] = {"scheduled": seq, "started": None, "attempt": p.get("attempt", 1)}
            return state
        scheduled = _id(p.get("scheduledEventId"))
        if current is None or scheduled != str(current["scheduled"]):
            raise _illegal(
                f"{kind} for workflow task {scheduled}, which is not the one scheduled"
                + (f" ({current['scheduled']})" if current else " (none is)")
            )
        if kind == "WorkflowTaskStarted":
            if current["started"] is not None:
                raise _illegal(f"WorkflowTaskStarted twice for workflow task {scheduled}")
            current["started"] = seq
            return state
        started = _id(p.get("startedEventId"))
        if kind != "WorkflowTaskTimedOut" and started != str(current["started"]):
            raise _illegal(f"{kind} for workflow task {scheduled}, which has not started")
        tasks["current"] = None
        if kind == "WorkflowTaskCompleted":
            tasks["completed"] += 1
        elif kind == "WorkflowTaskFailed":
            tasks["failed"] += 1
            tasks["last_failure"] = {
                "seq": seq,
                "cause": p.get("cause"),
                "failure": _failure(p.get("failure")),
            }
        else:
            tasks["timed_out"] += 1
        return state

    def _activity(
        self, state: State, kind: str, p: dict[str, Any], seq: int, ctx: Context
    ) -> State:
        activities = state["activities"]
        if kind == "ActivityTaskScheduled":
            activities[str(seq)] = {
                "type": _name(p.get("activityType")),
                "activity_id": p.get("activityId"),
                "input": _values(p.get("input")),
                "status": "scheduled",
                "attempt": None,
                "result": None,
                "failure": None,
                "cancel_requested": False,
            }
            return state
        sid = _id(p.get("scheduledEventId"))
        act = _started_by(activities, sid, kind, "activity", "scheduled")
        if kind == "ActivityTaskCancelRequested" and act["status"] not in ("scheduled", "started"):
            ctx.warn(_stricter(f"{kind} for activity {sid}, which already {act['status']}"))
            return state
        if act["status"] not in ("scheduled", "started"):
            raise _illegal(f"{kind} for activity {sid}, which already {act['status']}")
        if kind == "ActivityTaskStarted":
            if act["status"] != "scheduled":
                raise _illegal(f"ActivityTaskStarted twice for activity {sid}")
            act["status"] = "started"
            act["attempt"] = p.get("attempt")
        elif kind == "ActivityTaskCancelRequested":
            act["cancel_requested"] = True
        else:
            act["status"] = _ACTIVITY_END[kind]
            if kind == "ActivityTaskCompleted":
                act["result"] = _result(p.get("result"))
            elif kind in ("ActivityTaskFailed", "ActivityTaskTimedOut"):
                act["failure"] = _failure(p.get("failure"))
        return state

    def _timer(self, state: State, kind: str, p: dict[str, Any], seq: int) -> State:
        timers = state["timers"]
        tid = p.get("timerId")
        key = str(tid)
        timer = timers.get(key)
        if kind == "TimerStarted":
            if timer is not None and timer["status"] == "started":
                raise _illegal(f"TimerStarted for timer {tid}, which is already running")
            timers[key] = {"status": "started", "duration": p.get("startToFireTimeout"), "at": seq}
            return state
        if timer is None or timer["status"] != "started":
            why = "was never started" if timer is None else f"already {timer['status']}"
            raise _illegal(f"{kind} for timer {tid}, which {why}")
        timer["status"] = "fired" if kind == "TimerFired" else "cancelled"
        return state

    def _update(self, state: State, kind: str, p: dict[str, Any], seq: int, ctx: Context) -> State:
        updates = state["updates"]
        if kind in ("WorkflowExecutionUpdateAccepted", "WorkflowExecutionUpdateRejected"):
            request = p.get("acceptedRequest", p.get("rejectedRequest")) or {}
            meta = request.get("meta") or {}
            call = request.get("input") or {}
        else:
            request = p.get("request") or {}
            meta = p.get("meta", request.get("meta")) or {}
            call = request.get("input") or {}
        uid = meta.get("updateId")
        if not isinstance(uid, str) and kind == "WorkflowExecutionUpdateAccepted":
            # after a reset, or when the request came in an earlier (failed)
            # workflow task, the acceptance carries no request: Temporal names
            # the update by its protocol instance id, which its completion uses
            uid = p.get("protocolInstanceId")
        if not isinstance(uid, str):
            raise _illegal(f"{kind} without an updateId")
        update = updates.get(uid)
        if kind == "WorkflowExecutionUpdateAdmitted":
            updates[uid] = {"name": call.get("name"), "input": _values(call.get("args"))}
            updates[uid].update(status="admitted", result=None, failure=None)
            return state
        if kind in ("WorkflowExecutionUpdateAccepted", "WorkflowExecutionUpdateRejected"):
            if update is not None and update["status"] != "admitted":
                ctx.warn(_stricter(f"{kind} for update {uid}, which is already {update['status']}"))
            updates[uid] = {
                "name": call.get("name"),
                "input": _values(call.get("args")),
                "status": "accepted" if kind.endswith("Accepted") else "rejected",
                "result": None,
                "failure": _failure(p.get("failure")) if kind.endswith("Rejected") else None,
            }
            return state
        if update is None or update["status"] != "accepted":
            why = "was never accepted" if update is None else f"is {update['status']}"
            raise _illegal(f"WorkflowExecutionUpdateCompleted for update {uid}, which {why}")
        outcome = p.get("outcome") or {}
        update["status"] = "completed"
        if "failure" in outcome:
            update["failure"] = _failure(outcome["failure"])
        else:
            update["result"] = _result(outcome.get("success"))
        return state

    def _child(self, state: State, kind: str, p: dict[str, Any], seq: int) -> State:
        children = state["children"]
        if kind == "StartChildWorkflowExecutionInitiated":
            children[str(seq)] = {
                "type": _name(p.get("workflowType")),
                "workflow_id": p.get("workflowId"),
                "input": _values(p.get("input")),
                "status": "initiated",
                "run_id": None,
                "result": None,
                "failure": None,
            }
            return state
        iid = _id(p.get("initiatedEventId"))
        child = _started_by(children, iid, kind, "child workflow", "initiated")
        if kind in ("StartChildWorkflowExecutionFailed", "ChildWorkflowExecutionStarted"):
            if child["status"] != "initiated":
                raise _illegal(f"{kind} for child workflow {iid}, which is {child['status']}")
            if kind == "ChildWorkflowExecutionStarted":
                child["status"] = "started"
                execution = p.get("workflowExecution") or {}
                child["run_id"] = execution.get("runId")
            else:
                child["status"] = "failed_to_start"
                child["failure"] = {"message": p.get("cause"), "kind": "start"}
            return state
        if child["status"] != "started":
            raise _illegal(f"{kind} for child workflow {iid}, which is {child['status']}")
        child["status"] = _CHILD_END[kind]
        if kind == "ChildWorkflowExecutionCompleted":
            child["result"] = _result(p.get("result"))
        elif kind == "ChildWorkflowExecutionFailed":
            child["failure"] = _failure(p.get("failure"))
        return state

    def _nexus(self, state: State, kind: str, p: dict[str, Any], seq: int, ctx: Context) -> State:
        ops = state["nexus"]
        if kind == "NexusOperationScheduled":
            ops[str(seq)] = {
                "service": p.get("service"),
                "operation": p.get("operation"),
                "input": _value(p.get("input")),
                "status": "scheduled",
                "result": None,
                "failure": None,
            }
            return state
        sid = _id(p.get("scheduledEventId"))
        op = _started_by(ops, sid, kind, "Nexus operation", "scheduled")
        if kind == "NexusOperationCancelRequested" and op["status"] not in ("scheduled", "started"):
            ctx.warn(_stricter(f"{kind} for Nexus operation {sid}, which already {op['status']}"))
            return state
        if op["status"] not in ("scheduled", "started"):
            raise _illegal(f"{kind} for Nexus operation {sid}, which already {op['status']}")
        if kind == "NexusOperationStarted":
            op["status"] = "started"
        elif kind == "NexusOperationCancelRequested":
            op["cancel_requested"] = True
        else:
            op["status"] = _NEXUS_END[kind]
            if kind == "NexusOperationCompleted":
                op["result"] = _value(p.get("result"))
            else:
                op["failure"] = _failure(p.get("failure"))
        return state

    def _external(self, state: State, kind: str, p: dict[str, Any], seq: int) -> State:
        external = state["external"]
        if kind.endswith("Initiated"):
            execution = p.get("workflowExecution") or {}
            external[str(seq)] = {
                "action": "signal" if kind.startswith("Signal") else "cancel",
                "workflow_id": execution.get("workflowId"),
                "signal": p.get("signalName"),
                "status": "initiated",
            }
            return state
        iid = _id(p.get("initiatedEventId"))
        entry = _started_by(external, iid, kind, "external request", "initiated")
        if entry["status"] != "initiated":
            raise _illegal(f"{kind} for external request {iid}, which is {entry['status']}")
        entry["status"] = "failed" if kind.endswith("Failed") else "done"
        return state

    # -- for the app ---------------------------------------------------------
    def explain(self, before: State, event: Event, after: State) -> str:
        """The event in words, with what it changed, and the workflow task
        that commanded it when that was completed after it (a command
        buffered while an update or query was handled)."""
        words = self._explain(before, event, after)
        later = _completed_later(event)
        return f"{words}; completed by the workflow task at event {later}" if later else words

    def _explain(self, before: State, event: Event, after: State) -> str:
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
        sid = _id(p.get("scheduledEventId"))
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
        opener = _CALL_OPENERS.get(kind)
        if opener is not None:
            return f"{opener} {event.seq}"
        for prefix, field, name in _CALL_REFS:
            if kind.startswith(prefix):
                ref = _id(event.payload.get(field))
                return f"{name} {ref}" if ref is not None else None
        return None

    def call_facts(self, event: Event) -> CallFacts | None:
        return _call_facts(event.kind, event.payload)

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
            parts = [_name(p.get("workflowType")), "on", _name(p.get("taskQueue"))]
        elif kind == "ActivityTaskScheduled":
            parts = [_name(p.get("activityType")), f"#{p.get('activityId')}"]
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
            parts = ["child", _name(p.get("workflowType"))]
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
        later = _completed_later(event)
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
                else _id(p.get("scheduledEventId"))
            )
            act = state["activities"].get(sid or "")
            if act is not None:
                return f"activity {act['type']} · scheduled at event {sid}", act
        if "ChildWorkflowExecution" in kind:
            iid = str(event.seq) if kind.endswith("Initiated") else _id(p.get("initiatedEventId"))
            child = state["children"].get(iid or "")
            if child is not None:
                return f"child workflow {child['type']} · initiated at event {iid}", child
        if kind.startswith("NexusOperation"):
            sid = str(event.seq) if kind.endswith("Scheduled") else _id(p.get("scheduledEventId"))
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


REDUCER = TemporalRules()
