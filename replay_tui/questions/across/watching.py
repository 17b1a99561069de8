"""Watching states as a forward pass makes them: :class:`StateWatcher`
tells, after each event, what changed at some paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay_tui.questions.across.changes import (
    SCALAR_TYPES,
    Length,
    Moves,
    Snapshot,
    observe_change,
)
from replay_tui.questions.condition import ABSENT, StatePath, lookup


def _shown(seen: Any) -> Any:
    """An observation as the value it stands for (a length for ``Length``)."""
    if seen is ABSENT:
        return ABSENT
    if isinstance(seen, tuple):
        return seen[1]
    if isinstance(seen, Snapshot):
        return seen.value()
    if isinstance(seen, Length):
        return seen.n if seen.n is not None else True
    return seen


class TooBigToWatch(Exception):
    """A watched value is an object too big to compare after every event:
    ask the patch log instead (it costs what changed)."""


#: Bytes of an object compared after every event of a forward pass, at most.
WATCH_BYTES = 4096


class StateWatcher:
    """Watches paths in each state of a forward pass (see ``Replay.observer``).

    Give it the initial state with :meth:`start`, then each state in order
    with :meth:`see`; it returns what changed at the paths, or ``None``. An
    object compared whole costs its size an event: past :data:`WATCH_BYTES`
    it raises :class:`TooBigToWatch`.
    """

    def __init__(self, needs: Mapping[StatePath, str]) -> None:
        self.needs = dict(needs)
        self._seen: dict[StatePath, Any] = {}

    def _observe(self, value: Any, need: str) -> Any:
        seen = observe_change(value, need)
        if isinstance(seen, Snapshot) and len(seen.data) > WATCH_BYTES:
            raise TooBigToWatch(f"{len(seen.data):,} bytes")
        return seen

    def start(self, state: Any) -> None:
        self._seen = {p: self._observe(lookup(state, p), need) for p, need in self.needs.items()}

    def see(self, state: Any) -> Moves | None:
        moves: Moves | None = None
        seen = self._seen
        for path, need in self.needs.items():
            value = lookup(state, path)
            was = seen[path]
            if need == "value" and type(value) in SCALAR_TYPES:
                # the common case, a counter or a status: compared as it is
                if type(was) is tuple and was[0] is type(value) and was[1] == value:
                    continue
                now: Any = (type(value), value)
            else:
                now = self._observe(value, need)
            if now != was:
                if moves is None:
                    moves = {}
                moves[path] = (_shown(was), _shown(now))
                seen[path] = now
        return moves
