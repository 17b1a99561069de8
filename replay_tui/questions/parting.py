"""Where two replays of one history part in state, exactly, whatever the rules.

"The same" must mean one thing everywhere it is said (``diff``, compare
mode, the rules-reload mark): the two states have equal canonical digests
after every prefix. Comparing whole states at every prefix costs the state's
size an event, so what is compared is what each event *changed*:

- both sides start from states whose digests are compared first;
- from equal states, equal changes give equal states, and different exact
  changes give different states (a change list is the leaf-level
  :func:`~replay_tui.state.diff.diff` of the states around the event);
- changes are compared in a canonical form (sorted, keys sorted), so two
  rules that write the same values in another order or build the same dict
  in another key order change the same;
- where the changes first differ, the two states' digests there decide
  (a safety net: it is where a wrong "same" or a wrong seq would come from).

Where the changes come from depends on the rules. Rules that take drafts
(the built-in ones, ``drafts = True``) record them in the state store's
patch log as they run. Rules that change plain dicts, in place or not, have
no patch log: theirs is made by running them again and diffing the state
around each event (O(state) an event, the price of plain dicts).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.state import canonical
from replay_tui.state.diff import diff
from replay_tui.state.patchlog import PatchLog

_SORTED = orjson.OPT_SORT_KEYS
_EMPTY = b"[]"


def canonical_changes(record: bytes) -> bytes:
    """A patch-log record (one event's changes) in one form whatever order
    the rules wrote in: its rows sorted, the keys of every value sorted."""
    if record == _EMPTY:
        return record
    rows = strict_json.loads_written(record)
    if len(rows) == 1:
        return strict_json.dumps(rows, option=_SORTED)
    return b"[" + b",".join(sorted(strict_json.dumps(r, option=_SORTED) for r in rows)) + b"]"


def change_digest(record: bytes) -> bytes:
    """8 bytes that are equal for two records exactly when their canonical forms are."""
    return hashlib.blake2b(canonical_changes(record), digest_size=8).digest()


def same_changes(a: bytes, b: bytes) -> bool:
    """Two records of one event's changes say the same (the bytes first)."""
    return a == b or canonical_changes(a) == canonical_changes(b)


def state_digest(replay: Any, n: int) -> bytes:
    """The canonical digest of ``replay``'s state after ``n`` events (0..valid)."""
    return hashlib.blake2b(canonical.dumps(replay.frozen_at(n)), digest_size=8).digest()


def _diffed(replay: Any, until: int, cancelled: Callable[[], bool] | None) -> PatchLog | None:
    """A patch log for rules without drafts: the rules run again from the
    start, each event's changes the diff of the states around it (the rules
    may change the state in place, so the state before is a copy)."""
    log = PatchLog()
    states = replay.iter_states(until, cancelled)
    _, state = next(states)
    before = strict_json.loads_written(canonical.dumps_fast(state))
    for _, state in states:
        # both sides as JSON (a tuple is a list, as the digest writes it)
        after = strict_json.loads_written(canonical.dumps_fast(state))
        log.append(diff(before, after))
        before = after
    if len(log) < until:  # cancelled
        log.close()
        return None
    return log


@contextmanager
def change_log(
    replay: Any, until: int | None = None, cancelled: Callable[[], bool] | None = None
) -> Iterator[PatchLog | None]:
    """What each of ``replay``'s first ``until`` (default: valid) events
    changed: the state store's patch log, or one made for the occasion
    (closed on leaving); None if ``cancelled`` stopped the making."""
    limit = replay.valid if until is None else until
    if replay.history is not None:
        log = replay.history.patch_log(limit, cancelled)
        yield log if len(log) >= limit else None  # None: cancelled on the way
        return
    made = _diffed(replay, limit, cancelled)
    try:
        yield made
    finally:
        if made is not None:
            made.close()


def first_state_difference(
    a: Any, b: Any, limit: int, cancelled: Callable[[], bool] | None = None
) -> int | None:
    """The first ``n`` in 0..``limit`` whose states differ between replays
    ``a`` and ``b`` (0: the initial states), None if they never do through
    ``limit`` (or ``cancelled`` stopped the search)."""
    if state_digest(a, 0) != state_digest(b, 0):
        return 0
    with change_log(a, limit, cancelled) as log_a, change_log(b, limit, cancelled) as log_b:
        if log_a is None or log_b is None:
            return None
        for n in range(1, limit + 1):
            if cancelled is not None and n % 4096 == 0 and cancelled():
                return None
            if not same_changes(log_a.raw(n), log_b.raw(n)) and state_digest(a, n) != state_digest(
                b, n
            ):
                return n
    return None
