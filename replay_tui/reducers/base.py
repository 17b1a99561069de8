"""The reducer protocol: how rules turn events into state.

A reducer is any object with these attributes and methods (a module-level
instance, a class instance, anything). It is given one event at a time and
either returns the next state or raises :class:`RuleViolation`. Anything else
it raises is a bug in the rules, reported as ``reducer_error``.

State must be JSON (dicts with string keys, lists, str, int, float, bool,
None): the engine checkpoints it as canonical JSON and diffs it.

Two optional hooks let the app fold a call's events into one timeline row
(``v``): ``call_of(event) -> str | None`` names the call an event is part of
(the same string for all of its events; None for an event in no call), asked
once per event by the forward pass, so it must be quick and read only the
event; ``call_facts(event) -> CallFacts | None`` says what one event tells
about its call (the tool, a short argument, how it ended, what it cost),
asked only for the rows on screen.

Rules that keep an index in ``ctx.memo`` may say how to copy it
(``copy_memo(memo) -> dict``, a copy the rules can change without changing
``memo``): the app keeps it with each state it keeps, and a seek that runs
the rules again from there starts with the copy instead of building the
index again from the whole state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from replay_tui.core import strict_json
from replay_tui.core.errors import RuleViolation
from replay_tui.formats.budget import Budget
from replay_tui.formats.receipts import Receipt, ReceiptPending, ReceiptStore

if TYPE_CHECKING:
    from replay_tui.formats.envelope import Event

__all__ = [
    "CallFacts",
    "Context",
    "ReceiptPending",
    "Reducer",
    "RuleViolation",
    "State",
    "StateView",
]

#: What ``apply`` is given and returns: a dict (``check``, and rules of one's
#: own), or in the app a draft of the frozen state, which reads and writes as
#: a dict does (:class:`~replay_tui.state.drafts.DictDraft`: the built-in
#: rules, and rules of one's own that say ``drafts = True``).
State = MutableMapping[str, Any]
#: What the hooks that only read a state are given (``summary``, ``explain``,
#: ``notes``, ``still_open``, ``where``): a state as ``apply`` gives it, or
#: the app's frozen state, which cannot be changed.
StateView = Mapping[str, Any]


class Context:
    """What a reducer may consult besides the event: the budget and receipts.

    Nothing here calls out of the process: receipts stand in for tool results.
    """

    def __init__(
        self,
        budget: Budget,
        receipts: ReceiptStore,
        *,
        following: bool = False,
        fresh_receipts: bool = False,
    ) -> None:
        self.budget = budget
        self._receipts = receipts
        self.following = following
        #: Hand out a private copy of each receipt's data, so rules that
        #: change it cannot change what the next replay reads.
        self.fresh_receipts = fresh_receipts
        self._memo_owner: object = None
        self._memo: dict[str, Any] = {}
        #: What the rules said with :meth:`warn` while applying one event.
        self.warnings: list[str] = []
        #: When a list: each receipt the rules read, as (call_id, sha256), for
        #: ``diff`` (two runs' events are the same only with the same receipts).
        self.receipt_log: list[tuple[str, str]] | None = None
        #: The engine reads no state until it calls the rules' ``settle(state,
        #: ctx)`` (``check``'s pass): rules that have one may leave work that
        #: gives no warning until then. Off, each state is complete.
        self.settle_later = False

    def warn(self, message: str) -> None:
        """Say something odd but legal about the event being applied: a check
        these rules keep that is stricter than the system that wrote the run.
        It shows as a ``rule_warning`` at that event; replay goes on."""
        self.warnings.append(str(message))

    def memo(self, state: State) -> dict[str, Any]:
        """A scratch dict tied to this exact state object, for indexes the rules
        derive from the state (e.g. which calls are still running) so that an
        event costs what it changes, not the size of the state.

        It is empty whenever ``state`` is a different object (a checkpoint
        copy, a rebuild), so it can never disagree with the state it serves:
        rules must update it only after the state change it mirrors succeeded.
        """
        if self._memo_owner is not state:
            self._memo_owner = state
            self._memo = {}
        return self._memo

    def memo_of(self, state: object) -> dict[str, Any] | None:
        """The memo the rules keep for ``state`` (None: none for it)."""
        return self._memo if self._memo_owner is state else None

    def adopt_memo(self, state: object, memo: dict[str, Any]) -> None:
        """The engine's word that ``memo`` is what the rules kept for a state
        equal to ``state`` (a copy of it, kept with a state the app keeps)."""
        self._memo_owner = state
        self._memo = memo

    def carry_memo(self, old: object, new: object) -> None:
        """The engine's word that ``new`` is ``old`` changed only as the rules
        changed it (a draft of a frozen state, then its commit): the memo the
        rules kept for ``old`` holds for ``new`` too."""
        if self._memo_owner is old:
            self._memo_owner = new

    def receipt(self, call_id: str, pinned_sha256: Any = None) -> Receipt:
        """The receipt of ``call_id``, checked (raises missing/tampered/...).

        While following a live run, a receipt file that does not exist yet
        raises :class:`ReceiptPending` instead: the engine waits for it.
        """
        got = self._receipts.require(call_id, pinned_sha256, live=self.following)
        if self.receipt_log is not None:
            self.receipt_log.append((call_id, got.sha256))
        if self.fresh_receipts and got.data is not None:
            return dataclasses.replace(got, data=strict_json.loads_written(got.raw))
        return got


@dataclasses.dataclass(frozen=True, slots=True)
class CallFacts:
    """What one event says about its call (None: it says nothing of that)."""

    #: What the call runs: a tool's name, an activity's type.
    tool: str | None = None
    #: A short argument for the row (a path, a command).
    arg: str | None = None
    #: How the call ended, if this event ends it: "ok", "error" or "denied".
    status: str | None = None
    #: What this event says the call cost.
    cost: float | None = None


#: The statuses that say a call failed: ``e`` stops where a call ends so.
FAILED_CALL = frozenset({"error", "timed out", "terminated"})


def call_facts(reducer: object, event: Event) -> CallFacts | None:
    """The rules' optional ``call_facts`` for ``event``; a bug in it, or an
    answer of the wrong type, says nothing (it only words a row)."""
    fn = getattr(reducer, "call_facts", None)
    if fn is None:
        return None
    try:
        said = fn(event)
    except Exception:
        return None
    return said if isinstance(said, CallFacts) else None


@runtime_checkable
class Reducer(Protocol):
    """Rules over events. ``explain`` is optional (see :func:`explain`)."""

    name: str
    version: str
    kinds: frozenset[str]

    def initial_state(self) -> State:
        """The state after zero events (a new object each call)."""
        ...

    def apply(self, state: State, event: Event, ctx: Context) -> State:
        """The state after ``event``; may mutate ``state`` and return it."""
        ...

    def summary(self, state: StateView) -> str:
        """One word for the state (``retrying``); the report's ``state``."""
        ...


def explain(reducer: Reducer, before: StateView, event: Event, after: StateView) -> str | None:
    """The reducer's sentence for why ``event`` changed the state, if it has one."""
    fn = getattr(reducer, "explain", None)
    if fn is None:
        return None
    try:
        text = fn(before, event, after)
    except Exception as exc:  # a bug in optional prose must not hide the state
        return f"(explain failed: {type(exc).__name__}: {exc})"
    return text if isinstance(text, str) else None


def _lines_of(reducer: Reducer, hook: str, state: StateView) -> list[str]:
    """The rules' optional ``hook(state)`` that says a list of lines; empty
    if they have none or say no list, one line if it fails."""
    fn = getattr(reducer, hook, None)
    if fn is None:
        return []
    try:
        found = fn(state)
    except Exception as exc:  # a bug in optional prose must not hide the state
        return [f"({hook} failed: {type(exc).__name__}: {exc})"]
    if not isinstance(found, list):
        return []
    return [str(item) for item in found]


def notes(reducer: Reducer, state: StateView) -> list[str]:
    """What the rules say a person should know of ``state`` beyond its
    verdict (their optional ``notes``), e.g. what ``claude --resume`` would
    drop. Empty if they say nothing."""
    return _lines_of(reducer, "notes", state)


def where(reducer: Reducer, state: StateView) -> str | None:
    """Where in its history ``state`` stands, in a few words for the status
    line (the rules' optional ``where``): a resumed session's id at this
    point. None if they say nothing."""
    fn = getattr(reducer, "where", None)
    if fn is None:
        return None
    try:
        found = fn(state)
    except Exception:  # optional prose: a bug says nothing
        return None
    return found if isinstance(found, str) and found else None


def still_open(reducer: Reducer, state: StateView) -> list[str]:
    """What the rules say is still open in ``state`` (their optional
    ``still_open``): why a run that stops here ended as it did, e.g.
    ``call-003 allowed (never started)``. Empty if they say nothing."""
    return _lines_of(reducer, "still_open", state)
