"""Where two versions of the rules first disagree about the same history.

When the rules file changes, every prefix is re-evaluated; the first seq at
which the new rules derive a different state or a different verdict is what a
developer wants to see (like Redux DevTools re-running actions). Checkpoints
of both replays are compared first, so only one checkpoint interval is
replayed event by event.
"""

from __future__ import annotations

import orjson

from replay_tui import canonical
from replay_tui.replay import Replay


def first_difference(old: Replay, new: Replay) -> int | None:
    """The first seq whose state or verdict differs between two replays of one ledger.

    ``None`` when both agree on every prefix and on the verdict.
    """
    candidates: list[int] = []
    if _verdict(old) != _verdict(new):
        candidates.append(min(old.valid, new.valid) + 1)
    limit = min(old.valid, new.valid)
    state_seq = _first_state_difference(old, new, limit)
    if state_seq is not None:
        candidates.append(state_seq)
    return min(candidates) if candidates else None


def _verdict(replay: Replay) -> tuple[str | None, int | None, int]:
    err = replay.error
    return (err.code if err else None, err.seq if err else None, replay.valid)


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
