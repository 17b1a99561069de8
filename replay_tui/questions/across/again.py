"""Patch rows for the watched paths alone, where the patch log is not made
yet: the rules run again from the state kept before (recording nothing, as
the app's pass runs them) and the value at each path is read after every
event (:meth:`~replay_tui.state.history.History.watch_again`). That costs
a third of making the log's patches, which record every change the rules
make; a question deep in a long run is answered that much sooner.

A row is written exactly at a watched path, as the log would give it there
([path, op, old/new...]: see :mod:`replay_tui.state.patchlog`), for the
scans to read as they read the log's. Only what is cheap to tell after
every event is watched this way: a scalar, a length (not a draft object's,
which costs all that was written to it), whether a path is there. A
watched value that is an object or a list (a change inside it is not seen
without comparing it whole) is left to the log, and so are paths
one inside another (a row at one would be read as above the other)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from replay_tui.engine.seek import RulesNotDeterministic
from replay_tui.questions.across.changes import SCALAR_TYPES
from replay_tui.questions.across.patch_rows import Sized
from replay_tui.questions.condition import ABSENT, StatePath, key_index, lookup
from replay_tui.state.diff import path_str, scalar_changed
from replay_tui.state.drafts import DictDraft

if TYPE_CHECKING:
    from replay_tui.state.history import History

#: Events between two looks at whether the question was cancelled.
_LOOK_EVERY = 1024

#: A watched value that is an object or a list: left to the log.
_OBJECT: Any = object()

_ADDED, _CHANGED, _REMOVED = 1, 0, 2


def _seen(value: Any, need: str) -> Any:
    """What is told of a watched value after an event."""
    if value is ABSENT:
        return ABSENT
    if need == "exists":
        return True
    if type(value) in SCALAR_TYPES:
        return value
    if need == "len" and type(value) is not DictDraft:
        return Sized(len(value))
    return _OBJECT  # (a draft's length costs all it wrote: the log counts adds and removes)


def _differ(a: Any, b: Any) -> bool:
    """Whether the log would hold a change from ``a`` to ``b`` (scalars or
    lengths, or absent)."""
    if a is ABSENT or b is ABSENT:
        return a is not b
    return scalar_changed(a, b)


def _nested(paths: list[StatePath]) -> bool:
    """Whether a watched path may lie inside another (or be it twice): a
    key of digits alone taken for the list index it may read
    (``checks.0`` is ``checks[0]`` of a list)."""
    keys = [tuple(_as_index(k) for k in p) for p in paths]
    for i, p in enumerate(keys):
        for j, q in enumerate(keys):
            if i != j and len(p) <= len(q) and q[: len(p)] == p:
                return True
    return False


def _as_index(key: Any) -> Any:
    index = key_index(key) if isinstance(key, str) else None
    return key if index is None else index


class RowsAgain:
    """The rows of events ``first .. last`` at the watched paths, the rules
    run again (see the module); :attr:`usable` False once a watched value
    was found to be an object: the scan reads the log from then on."""

    def __init__(self, needs: Mapping[StatePath, str]) -> None:
        self._specs = [(p, list(p), need) for p, need in needs.items()]
        self.usable = bool(self._specs) and not _nested(list(needs))

    def rows(
        self,
        history: History,
        first: int,
        last: int,
        cancelled: threading.Event | None = None,
    ) -> dict[int, list[list[Any]]] | None:
        """{seq: rows} for the events in ``first .. last`` that changed a
        watched value; None if not told (a watched value is an object, or
        the question was cancelled). Raises
        :class:`~replay_tui.engine.seek.RulesNotDeterministic` where the
        rules, run again, reach a kept state with other values watched."""
        specs = self._specs
        found: dict[int, list[list[Any]]] = {}
        kept = history.kept_in(first, last)
        look = cancelled.is_set if cancelled is not None else None
        before: list[Any] = []
        whole = True
        one = specs[0] if len(specs) == 1 else None

        def see(n: int, state: Any) -> bool:
            nonlocal before, whole
            if n < first - 1:
                return True  # on the way from the state kept before
            if one is not None:  # one watched path, the common case: inline
                path, key, need = one
                value = lookup(state, path)
                if type(value) not in SCALAR_TYPES or need == "exists":
                    value = _seen(value, need)
                now = [value]
            else:
                now = [_seen(lookup(state, p), need) for p, _, need in specs]
            if _OBJECT in now:
                whole = self.usable = False
                return False
            if n >= first:
                if one is not None:
                    if _differ(before[0], value):
                        found[n] = [_row(key, before[0], value)]
                else:
                    rows = [
                        _row(k, was, told)
                        for (_, k, _), was, told in zip(specs, before, now, strict=True)
                        if _differ(was, told)
                    ]
                    if rows:
                        found[n] = rows
                if n in kept:
                    _check(n, now, kept[n])
                if look is not None and n % _LOOK_EVERY == 0 and look():
                    whole = False
                    return False
            before = now
            return True

        def _check(n: int, now: list[Any], state: Any) -> None:
            for (path, _, need), a in zip(specs, now, strict=True):
                if _differ(a, _seen(lookup(state, path), need)):
                    raise RulesNotDeterministic(
                        f"applied again, the rules gave another state after event {n}: "
                        f"{path_str(path)} differs (rules that read the clock, chance or "
                        "anything beside the state and the event cannot be replayed)"
                    )

        history.watch_again(first, last, see)
        return found if whole else None


def _row(key: list[Any], was: Any, now: Any) -> list[Any]:
    if was is ABSENT:
        return [key, _ADDED, now]
    if now is ABSENT:
        return [key, _REMOVED, was]
    return [key, _CHANGED, was, now]
