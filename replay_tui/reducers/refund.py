"""The ``refund`` rules: the teaching example of spec section 7.

Three kinds, one path: ``new -> waiting -> approved -> completed``. Each prefix
of ``requested(180), approved, refund_recorded(refund-42)`` gives a state a
student can predict by hand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from replay_tui.errors import RuleViolation
from replay_tui.reducers.base import Context, State, StateView

if TYPE_CHECKING:
    from replay_tui.envelope import Event

_NEXT = {
    "requested": ("new", "waiting"),
    "approved": ("waiting", "approved"),
    "refund_recorded": ("approved", "completed"),
}


class RefundRules:
    name = "refund"
    version = "1.0.0"
    kinds = frozenset(_NEXT)

    def initial_state(self) -> State:
        return {"status": "new", "amount": 0, "receipt": None}

    def apply(self, state: State, event: Event, ctx: Context) -> State:
        need, becomes = _NEXT[event.kind]
        if state["status"] != need:
            raise RuleViolation(
                "illegal_transition",
                f"{event.kind} needs status {need}, but the refund is {state['status']}",
            )
        p = event.payload
        if event.kind == "requested":
            amount = p.get("amount")
            if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
                raise RuleViolation("illegal_transition", "requested needs a positive amount")
            state["amount"] = amount
        elif event.kind == "refund_recorded":
            receipt = p.get("receipt")
            if not isinstance(receipt, str) or not receipt:
                raise RuleViolation("illegal_transition", "refund_recorded needs a receipt id")
            state["receipt"] = receipt
        state["status"] = becomes
        return state

    def summary(self, state: StateView) -> str:
        return str(state["status"])

    def still_open(self, state: StateView) -> list[str]:
        """A refund asked for but not yet paid out."""
        if state["status"] == "waiting":
            return [f"refund of {state['amount']} requested, not yet approved"]
        if state["status"] == "approved":
            return [f"refund of {state['amount']} approved, not yet recorded"]
        return []

    def explain(self, before: StateView, event: Event, after: StateView) -> str:
        said = f"{event.kind}: status {before['status']} -> {after['status']}"
        if event.kind == "requested":
            said += f"; amount {after['amount']}"
        if event.kind == "refund_recorded":
            said += f"; receipt {after['receipt']} (recorded, the refund service is not called)"
        return said


REDUCER = RefundRules()
