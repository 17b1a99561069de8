"""Where two versions of the rules first disagree about the same history.

When the rules file changes, every prefix is re-evaluated; the first seq at
which the new rules derive a different state or a different verdict is what a
developer wants to see (like Redux DevTools re-running actions). States are
compared as :mod:`replay_tui.questions.parting` compares them: exactly, at
every prefix, for every kind of rules.
"""

from __future__ import annotations

from replay_tui.engine.replay import Replay
from replay_tui.questions.parting import first_state_difference


def first_difference(old: Replay, new: Replay) -> int | None:
    """The first seq whose state or verdict differs between two replays of one ledger.

    ``None`` when both agree on every prefix and on the verdict; 1 when the
    initial states differ (the first event is the first to see it). Where
    one is still reading, only the prefixes both have read are compared.
    """
    candidates: list[int] = []
    # a replay still reading what was written (a followed ledger being caught
    # up on) has no verdict yet: how far it got is no difference
    reading = still_reading(old) or still_reading(new)
    if not reading and _verdict(old) != _verdict(new):
        candidates.append(min(old.valid, new.valid) + 1)
    state_seq = first_state_difference(old, new, min(old.valid, new.valid))
    if state_seq is not None:
        candidates.append(max(state_seq, 1))
    return min(candidates) if candidates else None


def still_reading(replay: Replay) -> bool:
    """Lines read that the replay has not judged yet, none read at all yet
    (a replay just made for a followed run), or bytes written past the last
    line read, while no error stopped it and the pass is not done."""
    if replay.finished or replay.error is not None:
        return False
    ledger = replay.ledger
    return replay.valid < len(ledger) or not len(ledger) or ledger.tail_size() > 0


def _verdict(replay: Replay) -> tuple[str | None, int | None, int]:
    err = replay.error
    return (err.code if err else None, err.seq if err else None, replay.valid)
