"""The state store: the state after every prefix, for the app to seek in.

The forward pass hands over each event's patches, and a frozen state (see
:mod:`replay_tui.state.persistent`) every few thousand patches, when
:meth:`History.due` says so: its rules change one draft across the events in
between (:class:`~replay_tui.state.drafts.Journal`), frozen once. The store
keeps the patches in a :class:`~replay_tui.state.patchlog.PatchLog`; since
consecutive states share all that did not change, a checkpoint costs only the
nodes copied since the one before. The state after
any prefix is then the nearest checkpoint plus at most a few thousand patches
applied (never the rules run again), and a step from a state already at hand
costs the one event's patches.
"""

from __future__ import annotations

import bisect
import gc
import threading
from collections.abc import Iterable
from typing import Any

from replay_tui.core.words import plural
from replay_tui.state.diff import MISSING, Change
from replay_tui.state.drafts import DictDraft, ListDraft
from replay_tui.state.patchlog import PatchLog

#: A checkpoint is kept once this many patches (or events) were recorded
#: since the last one; a seek applies at most about this many patches.
CHECKPOINT_PATCHES = 256
CHECKPOINT_EVENTS = 512


class History:
    """Frozen states and patches of events 1..n; readable from any thread."""

    def __init__(
        self,
        initial: Any,
        *,
        every_patches: int = CHECKPOINT_PATCHES,
        every_events: int = CHECKPOINT_EVENTS,
    ) -> None:
        self.patches = PatchLog()
        self._keys: list[int] = [0]
        self._states: list[Any] = [initial]
        self._n = 0  # events recorded
        self._every_patches = max(1, every_patches)
        self._every_events = max(1, every_events)
        self._since = 0  # patches since the last checkpoint
        self._lock = threading.Lock()
        #: The last state asked for, so that a step costs one event's patches.
        self._near: tuple[int, Any] = (0, initial)
        #: This store froze the collector's objects (see :meth:`keep`).
        self._froze = False

    def __len__(self) -> int:
        """Events recorded (the valid prefix)."""
        return self._n

    @property
    def head(self) -> Any:
        """The frozen state after every recorded event."""
        return self.state_at(self._n)

    def record(self, n: int, changes: list[Change]) -> None:
        """Event ``n`` (the next one) changed ``changes``."""
        self.patches.append(changes)
        self._since += len(changes)
        self._n = n

    def due(self) -> bool:
        """Whether the state after the last event recorded is to be kept (:meth:`keep`)."""
        return self._since >= self._every_patches or self._n - self._keys[-1] >= self._every_events

    def keep(self, n: int, state: Any) -> None:
        """``state`` is the frozen state after event ``n``, the last recorded."""
        with self._lock:
            self._keys.append(n)
            self._states.append(state)
            self._since = 0
        # Kept states live as long as the app: tell the cyclic GC to stop
        # rescanning them (frozen values hold no cycles; what dies among
        # them is freed by reference counting as before). Without this,
        # collections rescan millions of them: 40% of a 1M-event pass.
        gc.freeze()
        self._froze = True

    def settle(self, n: int, state: Any) -> None:
        """``state`` is the frozen state after event ``n``, the last recorded:
        asked for next (the last row shown), without keeping it for good."""
        with self._lock:
            self._near = (n, state)

    def changes(self, n: int) -> list[Change]:
        """What event ``n`` changed (1-based)."""
        return self.patches.changes(n)

    def state_at(self, n: int) -> Any:
        """The frozen state after events 1..n (0..len)."""
        with self._lock:
            recorded = self._n
            if not 0 <= n <= recorded:
                raise IndexError(f"no state at {n}: {plural(recorded, 'event')} recorded")
            i = bisect.bisect_right(self._keys, n) - 1
            at, state = self._keys[i], self._states[i]
            near_n, near = self._near
        # forward from the nearest checkpoint, or from the last state asked
        # for when that is closer (stepping with j). Never backwards: undoing
        # a removed key would put it back last, not where it was.
        if at < near_n <= n:
            state, at = near, near_n
        state = self._walk(state, at, n)
        with self._lock:
            self._near = (n, state)
        return state

    def _walk(self, state: Any, start: int, n: int) -> Any:
        if n == start:
            return state
        changes = [c for k in range(start + 1, n + 1) for c in self.patches.changes(k)]
        return apply_changes(state, changes)

    def close(self) -> None:
        """The store is let go of: its patch log closed, and, if :meth:`keep`
        froze anything, the collector's objects thawed, so that it can free
        this store and what refers to it in cycles (the app's panes that
        showed it) once they are dropped; a store still in use freezes them
        again at its next keep. A store that never kept a state thaws
        nothing: the collector is not sent to rescan another's kept states."""
        self.patches.close()
        if self._froze:
            gc.unfreeze()


def apply_changes(state: Any, changes: Iterable[Change]) -> Any:
    """The frozen state after ``changes``, recorded patches, are applied in order.

    Patches are leaf-level; along a list's tail they name rising indexes: an
    item is appended at the list's length and removed by cutting the list
    there. One draft takes them all, so each touched node is copied once.
    """
    root = DictDraft(state)
    for c in changes:
        new = c.new
        node: Any = root
        for key in c.path[:-1]:
            node = node[key]
        last = c.path[-1]
        if isinstance(node, ListDraft | list):
            assert isinstance(last, int)
            if new is MISSING:
                del node[last:]
            elif last >= len(node):
                node.append(new)
            else:
                node[last] = new
        elif new is MISSING:
            if last in node:
                del node[last]
        else:
            node[last] = new
    return root.commit(None)
