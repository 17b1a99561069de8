"""The state store: the state after every prefix, for the app to seek in.

The forward pass keeps a frozen state (see :mod:`replay_tui.state.persistent`)
every few hundred events, when :meth:`History.due` says so; since consecutive
states share all that did not change, a kept state costs only the nodes
copied since the one before. Each event's patches are kept in a
:class:`~replay_tui.state.patchlog.PatchLog`, made one of two ways:

- recorded by the forward pass itself (:meth:`History.record`: its rules
  change a :class:`~replay_tui.state.drafts.Journal` that tells what each
  event wrote), for rules whose memo holds what they read and rules that
  are watched;
- or made again when asked for (:meth:`History.make_again_with`): the pass
  runs the rules on a draft that records nothing, as ``check`` runs them on
  plain values, and keeps states only; the patches of the events between two
  kept states are made by running the rules again over them, from the first
  state, on a journal, the state they end at checked against the one kept
  (rules that do not give the same state twice are caught there). A few
  such spans are cached for the panes; the whole log, which questions across
  time read, is made in order behind the pass (:meth:`History.patch_log`).

The state after any prefix is the nearest kept state plus at most a few
hundred events' patches applied, and a step from a state already at hand
costs the one event's patches.
"""

from __future__ import annotations

import bisect
import gc
import math
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from replay_tui.core.words import plural
from replay_tui.state.diff import MISSING, Change
from replay_tui.state.drafts import DictDraft, ListDraft
from replay_tui.state.patchlog import PatchLog

#: A checkpoint is kept once this many patches (or events) were recorded
#: since the last one; a seek applies at most about this many patches.
CHECKPOINT_PATCHES = 256
CHECKPOINT_EVENTS = 512

#: Spans of events whose patches were made again, kept for the panes.
SPANS_CACHED = 8

#: ``again(start, end, state, memo, kept)``: the patches of events ``start+1
#: .. end``, each event's list, made by running the rules again from
#: ``state`` (the state after ``start``, with the rules' ``memo`` for it, or
#: None); ``kept`` is the state kept after ``end``, to check the rules ended
#: there (None: none kept yet).
MakeAgain = Callable[[int, int, Any, Any, Any], list[list[Change]]]

#: ``watch(start, end, state, memo, kept, see)``: the rules run again from
#: ``state`` (after ``start``, its ``memo``) over events ``start+1 .. end``,
#: recording nothing, ``see(n, state)`` told each state from ``start`` on
#: (True: go on), going on from the state and memo ``kept`` after a seq
#: where the pass kept one (as it went on from it); False if ``see`` stopped it.
WatchAgain = Callable[
    [int, int, Any, Any, Mapping[int, tuple[Any, Any]], Callable[[int, Any], bool]], bool
]


class History:
    """Frozen states and patches of events 1..n; readable from any thread."""

    def __init__(
        self,
        initial: Any,
        *,
        every_patches: int = CHECKPOINT_PATCHES,
        every_events: int = CHECKPOINT_EVENTS,
        every_seconds: float | None = None,
    ) -> None:
        self.patches = PatchLog()
        self._keys: list[int] = [0]
        self._states: list[Any] = [initial]
        #: The rules' memo for each kept state (a copy; None: none kept).
        self._memos: list[Any] = [None]
        self._n = 0  # events recorded
        self._every_patches = max(1, every_patches)
        self._every_events = max(1, every_events)
        self._since = 0  # patches since the last checkpoint
        #: Keep a state once the pass spent this long since the last one
        #: (None: by count alone): where each event costs the rules much,
        #: a span made again stays as quick to make as one of cheap events.
        self._every_seconds = every_seconds
        self._kept_at = time.perf_counter()
        self._lock = threading.Lock()
        #: The last state asked for, so that a step costs one event's patches.
        self._near: tuple[int, Any] = (0, initial)
        #: This store froze the collector's objects (see :meth:`keep`).
        self._froze = False
        #: Patches made again when asked for (None: the pass records them).
        self._again: MakeAgain | None = None
        self._watch: WatchAgain | None = None
        #: Questions running the rules again (:meth:`watch_again`) just now:
        #: work behind the pass gives way to them.
        self.watching = 0
        self._spans: OrderedDict[int, tuple[int, list[list[Change]]]] = OrderedDict()
        #: One filler of the patch log at a time (held a span at a time).
        self._fill_lock = threading.Lock()
        self._spans_lock = threading.Lock()  # the cache, for an instant

    def __len__(self) -> int:
        """Events recorded (the valid prefix)."""
        return self._n

    @property
    def head(self) -> Any:
        """The frozen state after every recorded event."""
        return self.state_at(self._n)

    def make_again_with(self, again: MakeAgain, watch: WatchAgain | None = None) -> None:
        """From now on the pass records no patches (:meth:`passed`): ``again``
        makes them when they are asked for; ``watch`` runs the rules again
        recording nothing (:meth:`watch_again`)."""
        self._again = again
        self._watch = watch

    @property
    def can_watch(self) -> bool:
        """:meth:`watch_again` can tell states the patch log has not reached."""
        return self._watch is not None

    def watch_again(self, first: int, last: int, see: Callable[[int, Any], bool]) -> bool:
        """The states after events ``start .. last``, the rules run again
        from the state kept after ``start``, the last kept before ``first``,
        on a draft that records nothing (a third of what making their
        patches costs), going on from each state kept on the way as the
        pass did: ``see(n, state)`` for each (a draft changed in place).
        False if ``see`` said stop. See :meth:`kept_in` to check the rules
        gave the kept states again."""
        watch = self._watch
        assert watch is not None
        with self._lock:
            if not 1 <= first <= last <= self._n:
                raise IndexError(f"no events {first}..{last}: {plural(self._n, 'event')} recorded")
            i = bisect.bisect_right(self._keys, first - 1) - 1
            start, state, memo = self._keys[i], self._states[i], self._memos[i]
            kept = self._kept_between(start + 1, last)
            self.watching += 1
        try:
            return watch(start, last, state, memo, kept, see)
        finally:
            with self._lock:
                self.watching -= 1

    def kept_with_memos(self) -> dict[int, tuple[Any, Any]]:
        """Every state kept and the rules' memo kept with it, by seq."""
        with self._lock:
            return self._kept_between(0, self._keys[-1])

    def kept_in(self, first: int, last: int) -> dict[int, Any]:
        """The states kept after events ``first .. last``, by seq."""
        with self._lock:
            return {n: state for n, (state, _) in self._kept_between(first, last).items()}

    def _kept_between(self, first: int, last: int) -> dict[int, tuple[Any, Any]]:
        """(state, memo) kept after events ``first .. last``, by seq (the lock held)."""
        i = bisect.bisect_left(self._keys, first)
        j = bisect.bisect_right(self._keys, last)
        kept = zip(self._states[i:j], self._memos[i:j], strict=True)
        return dict(zip(self._keys[i:j], kept, strict=True))

    @property
    def made_again(self) -> bool:
        """Patches are made again when asked for, not recorded by the pass."""
        return self._again is not None

    def record(self, n: int, changes: list[Change]) -> None:
        """Event ``n`` (the next one) changed ``changes``."""
        self.patches.append(changes)
        self._since += len(changes)
        self._n = n

    def unchanged(self, n: int) -> None:
        """Event ``n`` (the next one) was not applied (left out, or passed
        unread): it changed nothing."""
        if self._again is None:
            self.record(n, [])
        else:
            self.passed(n)

    def last_kept(self) -> tuple[int, Any]:
        """The last state kept, and the events it is after."""
        with self._lock:
            return self._keys[-1], self._states[-1]

    def passed(self, n: int) -> None:
        """Event ``n`` (the next one) was applied; its patches are made when asked for."""
        self._n = n

    def truncate(self, n: int) -> None:
        """Forget events after ``n`` (the pass found a later event not valid
        after all): only ever events after the last kept state."""
        with self._fill_lock, self._lock, self._spans_lock:
            if n < self._keys[-1]:
                raise ValueError(f"cannot forget event {n + 1}: a state after it is kept")
            self._n = n
            if len(self.patches) > n:
                self.patches.truncate(n)
            self._spans.pop(self._keys[-1], None)
            if self._near[0] > n:
                self._near = (self._keys[-1], self._states[-1])

    def due(self) -> bool:
        """Whether the state after the last event recorded is to be kept (:meth:`keep`)."""
        if self._since >= self._every_patches or self._n - self._keys[-1] >= self._every_events:
            return True
        seconds = self._every_seconds
        return seconds is not None and time.perf_counter() - self._kept_at >= seconds

    def next_due(self) -> tuple[int, float]:
        """When a pass that records nothing keeps a state next: after the
        event of this seq, or once ``time.perf_counter()`` passes this (inf:
        by count alone)."""
        seconds = self._every_seconds
        at = self._kept_at + seconds if seconds is not None else math.inf
        return self._keys[-1] + self._every_events, at

    @property
    def every_events(self) -> int:
        """A state is kept after at most this many events since the last."""
        return self._every_events

    def keep(self, n: int, state: Any, memo: Any = None) -> None:
        """``state`` is the frozen state after event ``n``, the last recorded
        (``memo``: a copy of the rules' memo for it, to start a seek with)."""
        with self._lock:
            self._keys.append(n)
            self._states.append(state)
            self._memos.append(memo)
            self._kept_at = time.perf_counter()
            self._since = 0
        # Kept states live as long as the app: tell the cyclic GC to stop
        # rescanning them (frozen values hold no cycles; what dies among
        # them is freed by reference counting as before). Without this,
        # collections rescan millions of them: 40% of a 1M-event pass.
        if _freeze_unless_closed():
            self._froze = True

    def settle(self, n: int, state: Any) -> None:
        """``state`` is the frozen state after event ``n``, the last recorded:
        asked for next (the last row shown), without keeping it for good."""
        with self._lock:
            self._near = (n, state)

    def changes(self, n: int) -> list[Change]:
        """What event ``n`` changed (1-based)."""
        if n <= len(self.patches) or self._again is None:
            return self.patches.changes(n)
        start, made = self._span_of(n)
        return made[n - start - 1]

    def _span_of(self, n: int) -> tuple[int, list[list[Change]]]:
        """The kept state's seq before event ``n`` and the patches of the
        events from there to the next kept state (or the last event): made
        again, or cached from the last time."""
        with self._lock:
            if not 1 <= n <= self._n:
                raise IndexError(f"no patches for event {n}: {plural(self._n, 'event')} recorded")
            i = bisect.bisect_right(self._keys, n - 1) - 1
            start, state, memo = self._keys[i], self._states[i], self._memos[i]
            last = i + 1 == len(self._keys)
            end = self._n if last else self._keys[i + 1]
            kept = None if last else self._states[i + 1]
        with self._spans_lock:
            cached = self._spans.get(start)
            if cached is not None and cached[0] >= end:
                self._spans.move_to_end(start)
                return start, cached[1]
        assert self._again is not None
        made = self._again(start, end, state, memo, kept)
        with self._spans_lock:
            self._spans[start] = (end, made)
            self._spans.move_to_end(start)
            while len(self._spans) > SPANS_CACHED:
                self._spans.popitem(last=False)
        return start, made

    def patch_log(
        self, until: int | None = None, cancelled: Callable[[], bool] | None = None
    ) -> PatchLog:
        """The patch log, holding events 1..``until`` at least (default: all
        recorded) unless ``cancelled`` said stop first: where the pass records
        no patches they are made now, in order, a kept state's span at a
        time (the caller's thread: a worker's)."""
        if self._again is None:
            return self.patches
        want = self._n if until is None else min(until, self._n)
        log = self.patches
        while len(log) < want:
            if cancelled is not None and cancelled():
                break
            with self._fill_lock:  # a span at a time: a pane's seek never waits for a fill
                have = len(log)
                if have < want:
                    start, made = self._span_of(have + 1)
                    for changes in made[have - start :]:
                        log.append(changes)
        return log

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
        changes = [c for k in range(start + 1, n + 1) for c in self.changes(k)]
        return apply_changes(state, changes)

    def close(self) -> None:
        """The store is let go of: its patch log closed, and, if :meth:`keep`
        froze anything, the collector's objects thawed, so that it can free
        this store and what refers to it in cycles (the app's panes that
        showed it) once they are dropped; a store still in use freezes them
        again at its next keep, once a collection has freed this one (a
        keep in between, as a reload's new replay fills, froze it again
        with what held it: never freed). A store that never kept a state thaws
        nothing: the collector is not sent to rescan another's kept states."""
        global _collected, _skipped
        self.patches.close()
        if self._froze:
            with _FREEZING:
                gc.unfreeze()
                _closed.append(weakref.ref(self))
                _collected = _skipped = 0


#: Stores closed since the collector last freed them: until it has, a
#: keep (another store's, filling in the meantime) would freeze them again
#: with what refers to them, for good (the replay a reload let go of).
_closed: list[weakref.ref[History]] = []
#: Held from the look at ``_closed`` to the freeze, and by ``close`` around
#: its thaw: a store closed in between cannot be frozen again unseen.
_FREEZING = threading.RLock()
#: Keeps that go by without freezing, a closed store still held elsewhere,
#: before the collector is asked once more; then freezing goes on (a store
#: held on purpose is not freed, as before this wait). Each collection runs
#: over the whole heap, thawed: two at most per close.
_SKIPS = 64
_collected = 0
_skipped = 0


def _freeze_unless_closed() -> bool:
    """Freeze the collector's objects (True), unless a store closed since is
    still alive: it would be frozen again, never freed. A collection first
    frees the ones let go of; one still held is waited for a while."""
    global _collected, _skipped
    with _FREEZING:
        if _alive() and _collected and _skipped < _SKIPS:
            _skipped += 1  # freed meanwhile by another collection, it goes on at once
            return False
        if _closed:
            gc.collect()
            _collected += 1
            _skipped = 0
            if _alive() and _collected < 2:
                return False
            _closed.clear()
        gc.freeze()
        return True


def _alive() -> bool:
    """Whether a store closed since the last freeze is still alive (the
    freed ones forgotten)."""
    _closed[:] = [ref for ref in _closed if ref() is not None]
    return bool(_closed)


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
