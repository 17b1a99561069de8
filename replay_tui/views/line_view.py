"""What the side panes show for one selected line (:class:`LineView`): its
event, step or error, the state, the rules' record, its causes and effects,
and the receipt of its call with its pin (:class:`ReceiptView`, the pin in
words in :data:`PIN_WORDS`). :class:`~replay_tui.views.runview.RunView` makes
them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replay_tui.core.errors import ReplayError, Warning_
from replay_tui.engine.replay import RecordedResult, Step
from replay_tui.formats.envelope import Event
from replay_tui.formats.receipts import Receipt
from replay_tui.reducers.base import StateView

#: A receipt's pin status in words (the receipt pane and the report say the same).
PIN_WORDS = {
    "matches": "pin ✓ matches receipt_sha256",
    "tampered": "pin ✗ TAMPERED: file differs from receipt_sha256",
    "missing": "receipt ✗ missing",
    "not pinned": "pin: not pinned (no receipt_sha256)",
    "none yet": "no receipt for this call yet (none is needed so far)",
    "denied": "the host denied this call: it was never made, so it has no receipt",
    "pending": "receipt pending: not written yet (following: it is waited for)",
}


@dataclass(frozen=True, slots=True)
class ReceiptView:
    """A call's receipt as the inspector shows it."""

    call_id: str
    name: str
    receipt: Receipt | None
    problem: str | None  # why there is no receipt to show
    #: "matches" | "tampered" | "not pinned" | "missing" | "none yet" | "denied" | "pending"
    pin: str
    pinned_sha256: str | None


@dataclass(frozen=True, slots=True)
class LineView:
    """Everything the side panes show for one selected line.

    ``mode`` is ``step`` (a replayed event), ``failed`` (the first
    inconsistency), ``unreplayed`` (after it), ``pending`` (validation has
    not reached it yet), or ``initial`` (prefix 0, before any event).
    """

    index: int
    mode: str
    event: Event | None
    step: Step | None = None
    state_before: StateView | None = None
    error: ReplayError | None = None
    raw: str | None = None
    receipt: ReceiptView | None = None
    summary: str | None = None  # the reducer's word for the state after this prefix
    #: Where in its history the state stands, as the rules say (``where``).
    where: str | None = None
    #: What the calls cost up to here (``cost $1.23``), where the state keeps a cost.
    cost: str | None = None
    #: What the rules say belongs beside this event in the inspector (a
    #: Temporal activity's input and result): (title, JSON value), as known
    #: after this prefix; and, when the run changed it later, as it ended up.
    record: tuple[str, Any] | None = None
    record_later: tuple[str, Any] | None = None
    #: At the last valid event: what the rules say is left open (unfinished calls).
    still_open: list[str] | None = None
    #: In an agent's session (Claude Code, Codex), the call this event
    #: requests or answers and its result as the session recorded it (the
    #: session's receipt), as known after this prefix; and, when it was
    #: recorded after this prefix, as it was. ``record`` / ``record_later``
    #: hold the same as (title, JSON value).
    result: RecordedResult | None = None
    result_later: RecordedResult | None = None
    #: Warnings at this line, as ``check`` prints them (odd but legal).
    warnings: tuple[Warning_, ...] = ()
    #: Its nearest causes (parent first) and the validated events naming it
    #: as theirs, (seq, kind) each, as many as the inspector names
    #: (:data:`CAUSES_SHOWN`, :data:`EFFECTS_SHOWN`); whether the chain goes
    #: on, and how many effects there are in all.
    causes: tuple[tuple[int, str], ...] = ()
    causes_more: bool = False
    effects: tuple[tuple[int, str], ...] = ()
    effects_count: int = 0
    #: Events validated when this view was made: ``record_later`` and
    #: ``still_open`` depend on it, so a view made earlier is made again.
    valid: int = -1


#: Causes and effects named atop the inspector (the receipt below matters
#: more); a view looks up no more than these (it is made at every step).
CAUSES_SHOWN = 3
EFFECTS_SHOWN = 6
