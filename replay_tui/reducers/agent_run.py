"""The ``agent_run`` rules (spec section 6): the default reducer.

An agent run proposes tool calls, the host allows or denies them, tools run
(their results are receipts), and checks decide whether the attempt passed.
The state says where the run is (``phase``), what each call did, and what was
spent against the budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.errors import RuleViolation
from replay_tui.reducers.base import CallFacts, Context, State, StateView

if TYPE_CHECKING:
    from replay_tui.envelope import Event

ACTIVE = frozenset({"running", "retrying"})
_BUSY = frozenset({"allowed", "started"})


def _busy(state: State, ctx: Context) -> set[str]:
    """call_ids allowed or started: kept in ctx.memo, so a check does not scan
    every call of a long run (built once per state object)."""
    memo = ctx.memo(state)
    busy: set[str] | None = memo.get("busy")
    if busy is None:
        busy = {cid for cid, c in state["calls"].items() if c["status"] in _BUSY}
        memo["busy"] = busy
    return busy


FINAL = frozenset({"succeeded", "failed"})
KINDS = frozenset(
    {
        "run_started",
        "attempt_started",
        "model_proposed",
        "tool_allowed",
        "tool_denied",
        "tool_started",
        "tool_finished",
        "model_finished",
        "check_finished",
        "state_changed",
    }
)


#: The kinds of a call's lifecycle (spec 6): proposed, allowed or denied, started, finished.
CALL_KINDS = frozenset(
    {"model_proposed", "tool_allowed", "tool_denied", "tool_started", "tool_finished"}
)


def _short_arg(args: Any) -> str | None:
    """The first argument's value, for a row: ``tests/test_parser.py``."""
    if isinstance(args, dict) and args:
        value = next(iter(args.values()))
        return value if isinstance(value, str) else str(value)
    return None


def _illegal(message: str) -> RuleViolation:
    return RuleViolation("illegal_transition", message)


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _tokens(payload: dict[str, Any]) -> int:
    tokens = payload.get("tokens", 0)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise _illegal(f"tokens must be a whole number >= 0, got {tokens!r}")
    return tokens


class AgentRunRules:
    name = "agent_run"
    version = "1.0.0"
    kinds = KINDS
    #: The kinds whose call_facts can say how a call ended (the forward
    #: pass asks only them whether a call failed).
    call_end_kinds = frozenset({"tool_denied", "tool_finished"})

    def copy_memo(self, memo: dict[str, Any]) -> dict[str, Any]:
        """The memo copied (see :func:`_busy`): a seek from a kept state
        starts with it, not with a scan of every call."""
        return {k: set(v) if isinstance(v, set) else v for k, v in memo.items()}

    def made_memo(self, state: State, ctx: Context) -> dict[str, Any]:
        """The memo these rules keep for ``state``, made where it is not yet."""
        _busy(state, ctx)
        return ctx.memo(state)

    def calls_changed(self, memo: dict[str, Any], changed: dict[str, Any]) -> None:
        """``changed`` calls (their new ``status`` each) were written by the
        rules' native twin (``native/src/rules/``): ``memo``, of the state
        before, is made the memo of the state after."""
        busy: set[str] | None = memo.get("busy")
        if busy is not None:
            for cid, call in changed.items():
                if call["status"] in _BUSY:
                    busy.add(cid)
                else:
                    busy.discard(cid)

    def initial_state(self) -> State:
        return {
            "phase": "new",
            "task": None,
            "model": None,
            "attempt": 0,
            "calls": {},
            "spent": {"tool_calls": 0, "cost": 0, "tokens": 0},
            "checks": [],
        }

    def summary(self, state: StateView) -> str:
        return str(state["phase"])

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        kind = event.kind
        p = event.payload
        phase = state["phase"]
        if kind == "state_changed":
            to = p.get("to")
            if to != phase:
                raise RuleViolation("divergence", f"host recorded {to!r}, rules derive {phase!r}")
            return state
        if phase in FINAL:
            raise _illegal(f"the run already {phase}: only state_changed to {phase!r} may follow")
        if kind == "run_started":
            if phase != "new":
                raise _illegal(f"run_started needs phase new, the run is {phase}")
            state["phase"] = "running"
            state["task"] = p.get("task")
            state["model"] = p.get("model")
            return state
        if phase not in ACTIVE:
            raise _illegal(f"{kind} needs a started run (phase running or retrying), it is {phase}")
        if kind == "attempt_started":
            return self._attempt_started(state, p, ctx)
        if kind == "model_proposed":
            return self._model_proposed(state, p)
        if kind == "model_finished":
            state["spent"]["tokens"] += _tokens(p)
            return state
        if kind == "check_finished":
            return self._check_finished(state, event, ctx)
        return self._call_step(state, event, ctx)

    def _attempt_started(self, state: State, p: dict[str, Any], ctx: Context) -> State:
        attempt = p.get("attempt")
        want = state["attempt"] + 1
        if type(attempt) is not int or attempt != want:
            raise _illegal(f"attempt_started says attempt {attempt!r}, the next attempt is {want}")
        limit = ctx.budget.max_attempts
        if limit is not None and attempt > limit:
            raise RuleViolation(
                "budget_exceeded", f"attempt {attempt} is over max_attempts {limit}"
            )
        state["attempt"] = attempt
        return state

    def _model_proposed(self, state: State, p: dict[str, Any]) -> State:
        if state["attempt"] < 1:
            raise _illegal("model_proposed before any attempt_started")
        call_id = p.get("call_id")
        if not isinstance(call_id, str):
            raise _illegal("model_proposed needs a call_id")
        if call_id in state["calls"]:
            raise _illegal(f"call_id {call_id} was already proposed")
        tool = p.get("tool")
        if not isinstance(tool, str):
            raise _illegal("model_proposed needs a tool name")
        tokens = _tokens(p)
        state["calls"][call_id] = {
            "tool": tool,
            "args": p.get("args"),
            "status": "proposed",
            "attempt": state["attempt"],
            "ok": None,
            "cost": None,
            "receipt": None,
            "reason": None,
        }
        state["spent"]["tokens"] += tokens
        return state

    def _call_step(self, state: State, event: Event, ctx: Context) -> State:
        """tool_allowed / tool_denied / tool_started / tool_finished."""
        p = event.payload
        kind = event.kind
        call_id = p.get("call_id")
        call = state["calls"].get(call_id) if isinstance(call_id, str) else None
        if call is None or not isinstance(call_id, str):
            raise _illegal(f"{kind} for call {call_id!r}, which was never proposed")
        need = {
            "tool_allowed": "proposed",
            "tool_denied": "proposed",
            "tool_started": "allowed",
            "tool_finished": "started",
        }[kind]
        if call["status"] != need:
            raise _illegal(f"{kind} needs call {call_id} {need}, it is {call['status']}")
        spent = state["spent"]
        if kind == "tool_allowed":
            limit = ctx.budget.max_tool_calls
            if limit is not None and spent["tool_calls"] + 1 > limit:
                raise RuleViolation(
                    "budget_exceeded",
                    f"allowing {call_id} makes {spent['tool_calls'] + 1} tool calls, "
                    f"over max_tool_calls {limit}",
                )
            busy = _busy(state, ctx)
            call["status"] = "allowed"
            spent["tool_calls"] += 1
            busy.add(call_id)
        elif kind == "tool_denied":
            call["status"] = "denied"
            call["reason"] = p.get("reason")
        elif kind == "tool_started":
            call["status"] = "started"
        else:
            ok = p.get("ok")
            if not isinstance(ok, bool):
                raise _illegal(f"tool_finished needs ok true or false, got {ok!r}")
            receipt = ctx.receipt(call_id, p.get("receipt_sha256"))
            cost = p.get("cost")  # spec: the payload's cost (a receipt's is informative)
            cost = 0 if cost is None else cost
            if not _number(cost) or cost < 0:
                raise _illegal(f"cost must be a number >= 0, got {cost!r}")
            total = spent["cost"] + cost
            limit_cost = ctx.budget.max_cost
            if limit_cost is not None and total > limit_cost:
                raise RuleViolation(
                    "budget_exceeded", f"cost {total:g} is over max_cost {limit_cost:g}"
                )
            busy = _busy(state, ctx)
            call.update(status="finished", ok=ok, cost=cost, receipt=receipt.name)
            spent["cost"] = total
            busy.discard(call_id)
        return state

    def _check_finished(self, state: State, event: Event, ctx: Context) -> State:
        p = event.payload
        passed = p.get("passed")
        if not isinstance(passed, bool):
            raise _illegal(f"check_finished needs passed true or false, got {passed!r}")
        busy = _busy(state, ctx)
        if busy:
            first = next(cid for cid in state["calls"] if cid in busy)
            raise _illegal(
                f"check_finished while call {first} is still {state['calls'][first]['status']}"
            )
        state["checks"].append({"seq": event.seq, "name": p.get("name"), "passed": passed})
        limit = ctx.budget.max_attempts
        if passed:
            state["phase"] = "succeeded"
        elif limit is None or state["attempt"] < limit:
            state["phase"] = "retrying"
        else:
            state["phase"] = "failed"
        return state

    # -- prose ------------------------------------------------------------
    def call_of(self, event: Event) -> str | None:
        """A call is its call_id's events, from proposed to finished."""
        if event.kind in CALL_KINDS:
            cid = event.payload.get("call_id")
            return cid if isinstance(cid, str) else None
        return None

    def call_facts(self, event: Event) -> CallFacts | None:
        p = event.payload
        kind = event.kind
        if kind == "model_proposed":
            tool = p.get("tool")
            return CallFacts(
                tool=tool if isinstance(tool, str) else None, arg=_short_arg(p.get("args"))
            )
        if kind == "tool_denied":
            return CallFacts(status="denied")
        if kind == "tool_finished":
            cost = p.get("cost")
            return CallFacts(
                status="ok" if p.get("ok") is True else "error",
                cost=cost if _number(cost) else None,
            )
        return None

    def still_open(self, state: StateView) -> list[str]:
        """Calls and an attempt the ledger leaves unfinished (a run that
        stopped mid-way), in the order they were proposed."""
        if state["phase"] in FINAL:
            return []
        waiting = {
            "proposed": "proposed (neither allowed nor denied)",
            "allowed": "allowed (never started)",
            "started": "started (never finished)",
        }
        found = [
            f"{cid} {waiting[call['status']]}"
            for cid, call in state["calls"].items()
            if call["status"] in waiting
        ]
        attempt = state["attempt"]
        if attempt >= 1 and len(state["checks"]) < attempt:
            found.append(f"attempt {attempt} has no check yet")
        return found

    def explain(self, before: StateView, event: Event, after: StateView) -> str:
        """One sentence for the rule that fired, e.g. for the app's diff pane."""
        kind = event.kind
        p = event.payload
        phase0, phase1 = before["phase"], after["phase"]
        moved = f"phase {phase0} -> {phase1}" if phase0 != phase1 else f"phase stays {phase1}"
        cid = p.get("call_id")
        if kind == "run_started":
            return f"run_started: {moved}"
        if kind == "attempt_started":
            return f"attempt_started: attempt {before['attempt']} -> {after['attempt']}"
        if kind == "model_proposed":
            tokens = p.get("tokens", 0)
            return f"model_proposed: call {cid} ({p.get('tool')}) proposed; tokens +{tokens}"
        if kind == "tool_allowed":
            return f"tool_allowed: {cid} proposed -> allowed; spent.tool_calls +1"
        if kind == "tool_denied":
            reason = p.get("reason")
            return f"tool_denied: {cid} proposed -> denied" + (f" ({reason})" if reason else "")
        if kind == "tool_started":
            return f"tool_started: {cid} allowed -> started"
        if kind == "tool_finished":
            call = after["calls"][cid]
            return (
                f"tool_finished: {cid} started -> finished, ok={call['ok']}; "
                f"cost +{call['cost']:g} from {call['receipt']}"
            )
        if kind == "model_finished":
            return f"model_finished: tokens +{p.get('tokens', 0)}"
        if kind == "check_finished":
            verdict = "passed" if p.get("passed") else "failed"
            return (
                f"check_finished: {p.get('name') or 'check'} {verdict} "
                f"in attempt {after['attempt']}; {moved}"
            )
        if kind == "state_changed":
            return f"state_changed: host recorded {p.get('to')!r}, rules agree"
        return kind


REDUCER = AgentRunRules()
