"""``check``'s states: one mutable state, and canonical JSON of it now and then.

``check`` reads a ledger once and never seeks, so it keeps the fastest
representation: the rules change one plain state in place, and a few JSON
checkpoints let the engine rebuild the valid prefix's state after an error
(the rules may have half-applied the failing event). User rules that take
plain dicts use the same in the app. Checkpoints are spaced by event count and
by the state's size (writing them costs a bounded share of each event), and
thinned (every other one dropped, spacing doubled) past their memory budget.

A replay that will not seek (``check``, the questions) spaces them by a
share of the events so far too (``growth``): a state that grows with the
run (a call table) was written out some 2 KiB an event, a third of
``check`` at a million events; spaced as far as the events before them, all
the checkpoints of a run write about twice its final state, and a rebuild
(only ``--partial`` after an error asks for one) replays at most half of it.
"""

from __future__ import annotations

import bisect
import threading

from replay_tui.reducers.base import State
from replay_tui.state import canonical


class JsonCheckpoints:
    """Canonical JSON of the state after some prefixes; readable from any thread."""

    def __init__(
        self, initial: State, *, every: int, budget_bytes: int, growth: int | None = None
    ) -> None:
        first = canonical.dumps_fast(initial)  # in the rules' key order, as the others
        self._data: dict[int, bytes] = {0: first}
        self._keys: list[int] = [0]
        self._size = len(first)
        self._every = max(1, every)
        self._budget = budget_bytes
        self._next = self._every
        #: With a growth of g, at least n / g events after a checkpoint at n.
        self._growth = growth
        self._lock = threading.Lock()

    def due(self, n: int) -> bool:
        """Is a checkpoint due after ``n`` events?"""
        return n >= self._next

    @property
    def next_due(self) -> int:
        """The first count of events after which a checkpoint is due."""
        return self._next

    def keep(self, n: int, state: State) -> None:
        """Keep the state after ``n`` events; ``TypeError`` if it is not JSON.

        The budget holds while the new one is written too: room for it (as
        big as the last) is made first, so a state bigger than half the
        budget is kept once, the newest, beside the initial state (at 1M
        events the state is 40 MB of JSON: two of them were a fifth of
        ``check``'s memory).
        """
        with self._lock:
            coming = len(self._data[self._keys[-1]])
            while self._size + coming > self._budget and len(self._keys) > 1:
                self._thin()
        data = canonical.dumps_fast(state)
        with self._lock:
            # (and as big as it is: after events applied natively, it is
            # the first since the start)
            while self._size + len(data) > self._budget and len(self._keys) > 1:
                self._thin()
            self._data[n] = data
            self._keys.append(n)
            self._size += len(data)
            # about 2 KiB of state written per event at most
            spacing = max(self._every, len(data) // 2048)
            if self._growth:
                spacing = max(spacing, n // self._growth)
            self._next = n + spacing

    def _thin(self) -> None:
        """Drop every other checkpoint after the initial one (the newest
        goes first when only it is left), and double the spacing."""
        self._every *= 2
        keys = self._keys
        keep = keys[:1] + keys[2::2] if len(keys) > 2 else keys[:1]
        kept = set(keep)
        for k in keys:
            if k not in kept:
                self._size -= len(self._data.pop(k))
        self._keys = keep

    def nearest(self, n: int) -> tuple[int, bytes]:
        """The last checkpoint at or before ``n``: (its prefix, its JSON)."""
        with self._lock:
            at = self._keys[bisect.bisect_right(self._keys, n) - 1]
            return at, self._data[at]

    def last(self) -> tuple[int, bytes]:
        with self._lock:
            return self._keys[-1], self._data[self._keys[-1]]

    def keys(self) -> list[int]:
        with self._lock:
            return list(self._keys)

    def get(self, n: int) -> bytes | None:
        with self._lock:
            return self._data.get(n)
