"""Where two versions of the rules first disagree about the same history.

When the rules file changes, every prefix is re-evaluated; the first seq at
which the new rules derive a different state or a different verdict is what a
developer wants to see (like Redux DevTools re-running actions). With the
state store (the app), the two patch logs are compared event by event; else
checkpoints of both replays are compared first, so only one checkpoint
interval is replayed event by event.
"""

from __future__ import annotations

import orjson

from replay_tui.engine.replay import Replay
from replay_tui.state import canonical
from replay_tui.state.diff import Change
from replay_tui.state.history import History


def first_difference(old: Replay, new: Replay) -> int | None:
    """The first seq whose state or verdict differs between two replays of one ledger.

    ``None`` when both agree on every prefix and on the verdict.
    """
    candidates: list[int] = []
    if _verdict(old) != _verdict(new):
        candidates.append(min(old.valid, new.valid) + 1)
    limit = min(old.valid, new.valid)
    if old.history is not None and new.history is not None:
        state_seq = _first_patch_difference(old.history, new.history, limit)
    else:
        state_seq = _first_state_difference(old, new, limit)
    if state_seq is not None:
        candidates.append(state_seq)
    return min(candidates) if candidates else None


def _verdict(replay: Replay) -> tuple[str | None, int | None, int]:
    err = replay.error
    return (err.code if err else None, err.seq if err else None, replay.valid)


def _first_patch_difference(old: History, new: History, limit: int) -> int | None:
    """From the patch logs: both start from the same state, so the first
    event whose patches differ is the first whose state differs (patches are
    the diff of the states around an event, whatever order they come in)."""
    if canonical.dumps(old.state_at(0)) != canonical.dumps(new.state_at(0)):
        return 1
    for n in range(1, limit + 1):
        a, b = old.patches.raw(n), new.patches.raw(n)
        if a != b and _patch_set(old.changes(n)) != _patch_set(new.changes(n)):
            return n
    return None


def _patch_set(changes: list[Change]) -> list[bytes]:
    return sorted(canonical.dumps(c.to_json()) for c in changes)


def _first_state_difference(old: Replay, new: Replay, limit: int) -> int | None:
    common = sorted(set(old.checkpoint_keys()) & set(new.checkpoint_keys()) | {0})
    common = [k for k in common if k <= limit]
    lo = 0
    hi = limit
    for key in common:
        if old.checkpoint_bytes(key) == new.checkpoint_bytes(key):
            lo = key
        else:
            hi = key
            break
    a = orjson.loads(old.checkpoint_bytes(lo))
    b = orjson.loads(new.checkpoint_bytes(lo))
    if canonical.dumps(a) != canonical.dumps(b):
        return lo if lo else 1  # they differ from the start: the initial state
    for index in range(lo, hi):
        event = old.ledger.fresh_event(index)
        twin = new.ledger.fresh_event(index)
        a = old.apply_rules(a, event, old.ctx)  # type: ignore[arg-type]
        b = new.apply_rules(b, twin, new.ctx)  # type: ignore[arg-type]
        if canonical.dumps(a) != canonical.dumps(b):
            return index + 1
    return None
