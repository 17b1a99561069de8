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

from replay_tui.reducers.base import Context, State, StateView
from replay_tui.reducers.temporal.history import (
    ACTIVITY_END,
    CHILD_END,
    CLOSED,
    KINDS,
    NEXUS_END,
    QUIET,
    event_id,
    failure_of,
    fields_of,
    illegal,
    name_of,
    new_state,
    result_of,
    started_by,
    stricter,
    value_of,
    values_of,
)
from replay_tui.reducers.temporal.words import TemporalWords

if TYPE_CHECKING:
    from replay_tui.envelope import Event


class TemporalRules(TemporalWords):
    name = "temporal"
    version = "1.1.0"
    kinds = KINDS
    #: Temporal writes ActivityTaskStarted when the attempt ends, stamped with
    #: the time it started: earlier than the events before it, and rightly so.
    late_ts_kinds = frozenset({"ActivityTaskStarted"})

    def initial_state(self) -> State:
        return new_state()

    def ignorable(self, event: Event) -> bool:
        """An event type these rules do not know, flagged ``workerMayIgnore``:
        Temporal's SDKs skip it on replay (how servers add event types)."""
        return event.fields.get("workerMayIgnore") is True

    def summary(self, state: StateView) -> str:
        return str(state["status"])

    def still_open(self, state: StateView) -> list[str]:
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
                raise illegal("WorkflowExecutionStarted again: the workflow already started")
            return self._started(state, p)
        if status == "new":
            raise illegal(f"{kind} before WorkflowExecutionStarted")
        if status != "running":
            raise illegal(f"{kind} after the workflow closed ({status})")
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
        if kind.startswith("NexusOperation") and kind not in QUIET:
            return self._nexus(state, kind, p, event.seq, ctx)
        if "ExternalWorkflowExecution" in kind:
            return self._external(state, kind, p, event.seq)
        if kind == "WorkflowExecutionSignaled":
            state["signals"].append(
                {"seq": event.seq, "name": p.get("signalName"), "input": values_of(p.get("input"))}
            )
        elif kind == "WorkflowExecutionCancelRequested":
            state["cancel_requested"] = True
        elif kind == "MarkerRecorded":
            details = p.get("details")
            state["markers"].append(
                {
                    "seq": event.seq,
                    "name": p.get("markerName"),
                    "details": {k: values_of(v) for k, v in details.items()}
                    if isinstance(details, dict)
                    else None,
                }
            )
        elif kind == "UpsertWorkflowSearchAttributes":
            state["search_attributes"].update(fields_of(p, "searchAttributes"))
        elif kind == "WorkflowPropertiesModified":
            state["memo"].update(fields_of(p, "upsertedMemo"))
        return state

    def _started(self, state: State, p: dict[str, Any]) -> State:
        state["status"] = "running"
        parent = p.get("parentWorkflowExecution")
        state["workflow"] = {
            "type": name_of(p.get("workflowType")),
            "id": p.get("workflowId"),
            "task_queue": name_of(p.get("taskQueue")),
            "input": values_of(p.get("input")),
            "attempt": p.get("attempt", 1),
            "parent": parent.get("workflowId") if isinstance(parent, dict) else None,
            "cron": p.get("cronSchedule") or None,
            "continued_from": p.get("continuedExecutionRunId") or None,
        }
        state["memo"] = fields_of(p, "memo")
        state["search_attributes"] = fields_of(p, "searchAttributes")
        return state

    def _closed(self, state: State, kind: str, p: dict[str, Any]) -> State:
        state["status"] = CLOSED[kind]
        if kind == "WorkflowExecutionCompleted":
            state["result"] = result_of(p.get("result"))
        elif kind == "WorkflowExecutionFailed":
            state["failure"] = failure_of(p.get("failure"))
        elif kind == "WorkflowExecutionTerminated":
            state["failure"] = {"message": p.get("reason"), "kind": "terminated"}
        elif kind == "WorkflowExecutionTimedOut":
            state["failure"] = {"message": "workflow timed out", "kind": "timeout"}
        elif kind == "WorkflowExecutionContinuedAsNew":
            state["result"] = {
                "new_run_id": p.get("newExecutionRunId"),
                "input": values_of(p.get("input")),
            }
        return state

    def _workflow_task(self, state: State, kind: str, p: dict[str, Any], seq: int) -> State:
        tasks = state["workflow_tasks"]
        current = tasks["current"]
        if kind == "WorkflowTaskScheduled":
            if current is not None and current["started"] is not None:
                raise illegal(
                    f"WorkflowTaskScheduled while workflow task {current['scheduled']} is running"
                )
            tasks["scheduled"] += 1
            tasks["current"] = {"scheduled": seq, "started": None, "attempt": p.get("attempt", 1)}
            return state
        scheduled = event_id(p.get("scheduledEventId"))
        if current is None or scheduled != str(current["scheduled"]):
            raise illegal(
                f"{kind} for workflow task {scheduled}, which is not the one scheduled"
                + (f" ({current['scheduled']})" if current else " (none is)")
            )
        if kind == "WorkflowTaskStarted":
            if current["started"] is not None:
                raise illegal(f"WorkflowTaskStarted twice for workflow task {scheduled}")
            current["started"] = seq
            return state
        started = event_id(p.get("startedEventId"))
        if kind != "WorkflowTaskTimedOut" and started != str(current["started"]):
            raise illegal(f"{kind} for workflow task {scheduled}, which has not started")
        tasks["current"] = None
        if kind == "WorkflowTaskCompleted":
            tasks["completed"] += 1
        elif kind == "WorkflowTaskFailed":
            tasks["failed"] += 1
            tasks["last_failure"] = {
                "seq": seq,
                "cause": p.get("cause"),
                "failure": failure_of(p.get("failure")),
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
                "type": name_of(p.get("activityType")),
                "activity_id": p.get("activityId"),
                "input": values_of(p.get("input")),
                "status": "scheduled",
                "attempt": None,
                "result": None,
                "failure": None,
                "cancel_requested": False,
            }
            return state
        sid = event_id(p.get("scheduledEventId"))
        act = started_by(activities, sid, kind, "activity", "scheduled")
        if kind == "ActivityTaskCancelRequested" and act["status"] not in ("scheduled", "started"):
            ctx.warn(stricter(f"{kind} for activity {sid}, which already {act['status']}"))
            return state
        if act["status"] not in ("scheduled", "started"):
            raise illegal(f"{kind} for activity {sid}, which already {act['status']}")
        if kind == "ActivityTaskStarted":
            if act["status"] != "scheduled":
                raise illegal(f"ActivityTaskStarted twice for activity {sid}")
            act["status"] = "started"
            act["attempt"] = p.get("attempt")
        elif kind == "ActivityTaskCancelRequested":
            act["cancel_requested"] = True
        else:
            act["status"] = ACTIVITY_END[kind]
            if kind == "ActivityTaskCompleted":
                act["result"] = result_of(p.get("result"))
            elif kind in ("ActivityTaskFailed", "ActivityTaskTimedOut"):
                act["failure"] = failure_of(p.get("failure"))
        return state

    def _timer(self, state: State, kind: str, p: dict[str, Any], seq: int) -> State:
        timers = state["timers"]
        tid = p.get("timerId")
        key = str(tid)
        timer = timers.get(key)
        if kind == "TimerStarted":
            if timer is not None and timer["status"] == "started":
                raise illegal(f"TimerStarted for timer {tid}, which is already running")
            timers[key] = {"status": "started", "duration": p.get("startToFireTimeout"), "at": seq}
            return state
        if timer is None or timer["status"] != "started":
            why = "was never started" if timer is None else f"already {timer['status']}"
            raise illegal(f"{kind} for timer {tid}, which {why}")
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
            raise illegal(f"{kind} without an updateId")
        update = updates.get(uid)
        if kind == "WorkflowExecutionUpdateAdmitted":
            updates[uid] = {"name": call.get("name"), "input": values_of(call.get("args"))}
            updates[uid].update(status="admitted", result=None, failure=None)
            return state
        if kind in ("WorkflowExecutionUpdateAccepted", "WorkflowExecutionUpdateRejected"):
            if update is not None and update["status"] != "admitted":
                ctx.warn(stricter(f"{kind} for update {uid}, which is already {update['status']}"))
            updates[uid] = {
                "name": call.get("name"),
                "input": values_of(call.get("args")),
                "status": "accepted" if kind.endswith("Accepted") else "rejected",
                "result": None,
                "failure": failure_of(p.get("failure")) if kind.endswith("Rejected") else None,
            }
            return state
        if update is None or update["status"] != "accepted":
            why = "was never accepted" if update is None else f"is {update['status']}"
            raise illegal(f"WorkflowExecutionUpdateCompleted for update {uid}, which {why}")
        outcome = p.get("outcome") or {}
        update["status"] = "completed"
        if "failure" in outcome:
            update["failure"] = failure_of(outcome["failure"])
        else:
            update["result"] = result_of(outcome.get("success"))
        return state

    def _child(self, state: State, kind: str, p: dict[str, Any], seq: int) -> State:
        children = state["children"]
        if kind == "StartChildWorkflowExecutionInitiated":
            children[str(seq)] = {
                "type": name_of(p.get("workflowType")),
                "workflow_id": p.get("workflowId"),
                "input": values_of(p.get("input")),
                "status": "initiated",
                "run_id": None,
                "result": None,
                "failure": None,
            }
            return state
        iid = event_id(p.get("initiatedEventId"))
        child = started_by(children, iid, kind, "child workflow", "initiated")
        if kind in ("StartChildWorkflowExecutionFailed", "ChildWorkflowExecutionStarted"):
            if child["status"] != "initiated":
                raise illegal(f"{kind} for child workflow {iid}, which is {child['status']}")
            if kind == "ChildWorkflowExecutionStarted":
                child["status"] = "started"
                execution = p.get("workflowExecution") or {}
                child["run_id"] = execution.get("runId")
            else:
                child["status"] = "failed_to_start"
                child["failure"] = {"message": p.get("cause"), "kind": "start"}
            return state
        if child["status"] != "started":
            raise illegal(f"{kind} for child workflow {iid}, which is {child['status']}")
        child["status"] = CHILD_END[kind]
        if kind == "ChildWorkflowExecutionCompleted":
            child["result"] = result_of(p.get("result"))
        elif kind == "ChildWorkflowExecutionFailed":
            child["failure"] = failure_of(p.get("failure"))
        return state

    def _nexus(self, state: State, kind: str, p: dict[str, Any], seq: int, ctx: Context) -> State:
        ops = state["nexus"]
        if kind == "NexusOperationScheduled":
            ops[str(seq)] = {
                "service": p.get("service"),
                "operation": p.get("operation"),
                "input": value_of(p.get("input")),
                "status": "scheduled",
                "result": None,
                "failure": None,
            }
            return state
        sid = event_id(p.get("scheduledEventId"))
        op = started_by(ops, sid, kind, "Nexus operation", "scheduled")
        if kind == "NexusOperationCancelRequested" and op["status"] not in ("scheduled", "started"):
            ctx.warn(stricter(f"{kind} for Nexus operation {sid}, which already {op['status']}"))
            return state
        if op["status"] not in ("scheduled", "started"):
            raise illegal(f"{kind} for Nexus operation {sid}, which already {op['status']}")
        if kind == "NexusOperationStarted":
            op["status"] = "started"
        elif kind == "NexusOperationCancelRequested":
            op["cancel_requested"] = True
        else:
            op["status"] = NEXUS_END[kind]
            if kind == "NexusOperationCompleted":
                op["result"] = value_of(p.get("result"))
            else:
                op["failure"] = failure_of(p.get("failure"))
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
        iid = event_id(p.get("initiatedEventId"))
        entry = started_by(external, iid, kind, "external request", "initiated")
        if entry["status"] != "initiated":
            raise illegal(f"{kind} for external request {iid}, which is {entry['status']}")
        entry["status"] = "failed" if kind.endswith("Failed") else "done"
        return state

    # -- for the app ---------------------------------------------------------


REDUCER = TemporalRules()
