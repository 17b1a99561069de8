"""How the engine calls a reducer.

Built-in rules are called directly. Rules of your own are watched (they must
return within the timeout, and leave the event they are given as it was; see
:mod:`replay_tui.reducers.calling.guard`), and get plain dicts unless they say they take
drafts (``drafts = True``). Everything that calls the rules goes through
:class:`RulesCaller`, so those promises hold for ``apply``, ``summary``,
``explain`` and the inspector's ``record_for`` alike.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.reducers import LoadedReducer
from replay_tui.reducers.base import Context, State, StateView, explain, notes, still_open, where
from replay_tui.reducers.calling.guard import EventChanged, RulesWatch
from replay_tui.state import canonical
from replay_tui.state.diff import diff
from replay_tui.state.paths import format_path
from replay_tui.state.persistent import is_frozen, thaw

if TYPE_CHECKING:
    from replay_tui.formats.envelope import Event


def takes_drafts(rules: LoadedReducer) -> bool:
    """Built-in rules, and user rules that say ``drafts = True``: their
    ``apply`` changes the state only through dict and list operations, so
    it may be given a draft (a dict-like view that records what it writes)."""
    return rules.trusted or getattr(rules.reducer, "drafts", False) is True


class RulesCaller:
    """One reducer, called as its kind of rules must be."""

    def __init__(self, rules: LoadedReducer, watch: RulesWatch) -> None:
        self.rules = rules
        self.reducer = rules.reducer
        #: Rules not built in are watched: they must return, and leave events be.
        self.guarded = not rules.trusted
        self.watch = watch
        self.drafts = takes_drafts(rules)

    def initial_state(self) -> State:
        """The rules' state after zero events; CannotRun if they cannot give one."""
        try:
            if self.guarded:
                initial = self.watch.call(None, self.reducer.initial_state)
            else:
                initial = self.reducer.initial_state()
            canonical.dumps(initial)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise CannotRun(
                f"the rules' initial_state() failed: {type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(initial, dict):
            raise CannotRun(f"the rules' initial_state() gave {type(initial).__name__}, not a dict")
        return initial

    def apply(self, state: State, event: Event, ctx: Context) -> State:
        """``reducer.apply``; for rules not built in, watched and checked
        for leaving the event as it was given."""
        if not self.guarded:
            return self.reducer.apply(state, event, ctx)
        before = _event_bytes(event)
        new = self.watch.call(event.seq, self.reducer.apply, state, event, ctx)
        after = _event_bytes(event)
        if after != before:
            raise EventChanged(_event_change(before, after))
        return new

    @property
    def settles(self) -> bool:
        """Built-in rules with a ``settle``: given ``ctx.settle_later``, their
        ``apply`` may leave work (that gives no warning) until ``settle``."""
        return not self.guarded and callable(getattr(self.reducer, "settle", None))

    def settle(self, state: State, ctx: Context) -> None:
        """Let the rules finish ``state`` (see :attr:`settles`)."""
        settle = getattr(self.reducer, "settle", None) if not self.guarded else None
        if callable(settle):
            settle(state, ctx)

    def apply_line(self, state: State, event: Event, ctx: Context, raw: bytes) -> State:
        """:meth:`apply` of an event read from ``raw``, a compact line
        (``strict_json.dumps(event.fields) == raw``): for watched rules the line
        stands for the event's bytes before the call, one dump instead of two."""
        if not self.guarded:
            return self.reducer.apply(state, event, ctx)
        payload, seq, kind, run_id = event.payload, event.seq, event.kind, event.run_id
        new = self.watch.call(seq, self.reducer.apply, state, event, ctx)
        try:
            kept = strict_json.dumps(event.fields) == raw
        except TypeError:  # the rules put something that is not JSON in it
            kept = False
        if not (
            kept
            and event.payload is payload
            and type(event.seq) is int
            and event.seq == seq
            and event.kind == kind
            and event.run_id == run_id
        ):
            before = strict_json.dumps([strict_json.loads_written(raw), None, seq, kind, run_id])
            after = _event_bytes(event)
            if after != before:
                raise EventChanged(_event_change(before, after))
        return new

    def as_rules_take(self, state: StateView) -> StateView:
        """``state`` as these rules may be given it: frozen states are
        read-only dicts, fine for rules that take drafts; other user rules
        were promised plain dicts, so they get a copy (O(state))."""
        if is_frozen(state) and not self.drafts:
            return thaw(state)  # type: ignore[no-any-return]
        return state

    def summary(self, state: StateView) -> str:
        """``reducer.summary`` (watched for rules not built in)."""
        if not self.guarded:
            return self.reducer.summary(state)
        return self.watch.call(None, self.reducer.summary, self.as_rules_take(state))

    def explain(self, before: StateView, event: Event, after: StateView) -> str | None:
        """The rule in words (optional ``explain``), for the diff pane."""
        if not self.guarded:
            return explain(self.reducer, before, event, after)
        before, after = self.as_rules_take(before), self.as_rules_take(after)
        return self.watch.call(event.seq, explain, self.reducer, before, event, after)

    def still_open(self, state: StateView) -> list[str]:
        """What the rules say is still open in ``state`` (optional hook)."""
        if not self.guarded:
            return still_open(self.reducer, state)
        return self.watch.call(None, still_open, self.reducer, self.as_rules_take(state))

    def where(self, state: StateView) -> str | None:
        """Where in its history ``state`` stands (optional hook)."""
        if not self.guarded:
            return where(self.reducer, state)
        said = self.watch.call(None, where, self.reducer, self.as_rules_take(state))
        return said if isinstance(said, str) else None

    def notes(self, state: StateView) -> list[str]:
        """What the rules say a person should know of ``state`` (optional hook)."""
        if not self.guarded:
            return notes(self.reducer, state)
        return self.watch.call(None, notes, self.reducer, self.as_rules_take(state))

    def copy_memo(self, memo: dict[str, Any] | None) -> dict[str, Any] | None:
        """The rules' copy of ``memo`` (optional ``copy_memo``; built-in rules
        only), or None: none to keep."""
        fn = getattr(self.reducer, "copy_memo", None)
        if memo is None or self.guarded or not callable(fn):
            return None
        copied = fn(memo)
        return copied if isinstance(copied, dict) else None

    def call_of(self) -> Callable[[Event], str | None] | None:
        """The rules' optional ``call_of`` (which call an event is part of),
        watched for rules not built in; None if they have none."""
        fn = getattr(self.reducer, "call_of", None)
        if not callable(fn):
            return None
        if not self.guarded:
            return fn  # type: ignore[no-any-return]
        watch = self.watch
        return lambda event: watch.call(event.seq, fn, event)

    def call_with_state(
        self, seq: int | None, fn: Callable[..., Any], state: StateView, *args: Any
    ) -> Any:
        """Any other hook of the rules that reads a state (``record_for``)."""
        if not self.guarded:
            return fn(state, *args)
        return self.watch.call(seq, fn, self.as_rules_take(state), *args)


_REDUCERS_DIR = Path(__file__).resolve().parent.parent
_PACKAGE_DIR = _REDUCERS_DIR.parent
#: In reducers/, what loads the rules and states their contract rather than
#: being rules (what calls them is in calling/, apart).
_CALLERS = frozenset({"__init__.py", "base.py"})


def _is_rules_frame(filename: str) -> bool:
    """A frame of the rules: anything outside replay-tui, or a module of the
    built-in rules (in reducers/ or a package of it); not the engine's, nor
    what loads or calls the rules."""
    path = Path(filename).resolve()
    if not path.is_relative_to(_PACKAGE_DIR):
        return True
    if not path.is_relative_to(_REDUCERS_DIR):
        return False
    parts = path.relative_to(_REDUCERS_DIR).parts
    if len(parts) == 1:
        return parts[0] not in _CALLERS
    return parts[0] != "calling"


def rules_traceback() -> str:
    """The exception being handled, as the rules' author needs it: the
    frames of the rules, without replay-tui's own around them."""
    exc = sys.exc_info()[1]
    if exc is None:
        return ""
    tb = traceback.TracebackException.from_exception(exc, capture_locals=False)
    frames = [f for f in tb.stack if _is_rules_frame(f.filename)]
    if frames:
        tb.stack = traceback.StackSummary.from_list(frames)
    return "".join(tb.format())


def _event_bytes(event: Event) -> bytes:
    """What the rules were given, as bytes to compare after the call."""
    fields, payload = event.fields, event.payload
    inside = payload is fields or payload is fields.get("payload")
    try:
        # the payload is written once, inside the fields (a new one is not None)
        return strict_json.dumps(
            [fields, None if inside else payload, event.seq, event.kind, event.run_id]
        )
    except TypeError as exc:  # the rules put something that is not JSON in it
        return f"not JSON: {exc}".encode()


def _event_change(before: bytes, after: bytes) -> str:
    head = "the rules changed the event they were given (rules must leave events as they are)"
    try:
        old, new = strict_json.loads_written(before), strict_json.loads_written(after)
    except orjson.JSONDecodeError:
        return f"{head}: it now holds a value that is not JSON"
    changes = diff(old[0], new[0]) or diff(old[1:], new[1:])
    if not changes:
        return head
    where = format_path(changes[0].path) or "the event itself"
    return f"{head}: {where} changed"
