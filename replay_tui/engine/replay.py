"""The replay engine: strict validation, state after any prefix, one step's diff.

:class:`Replay` reads the ledger forward once, checking every line and
running the reducer, and keeps canonical-JSON checkpoints of the state. The
state after any prefix ``n`` is then the nearest checkpoint at or before ``n``
plus a bounded number of events: seeking does not replay from the start.
Checkpoints are spaced by event count and by the state's size, so writing
them costs a bounded share of each event, and thinned (every other one
dropped, spacing doubled) when they outgrow their memory budget, so both
memory and seek time stay bounded.

Strict replay stops at the first inconsistency. The longest valid prefix is
still available (``valid`` events), which is all that partial mode reports.

The pieces (each a mixin over :class:`~.replay_core.ReplayCore`, which holds
the run's attributes and the primitives they share): :mod:`.forward` (the
forward pass, the hot path), :mod:`.follow` (a growing ledger), :mod:`.seek`
(states at any prefix, steps, checkpoints), :mod:`.results` (a session's
calls and their results as recorded: its receipts).
"""

from __future__ import annotations

from typing import Any

from replay_tui.engine.follow import Following
from replay_tui.engine.forward import ForwardPass
from replay_tui.engine.replay_core import LedgerChanged, Pending, open_ledger, why_not_follow
from replay_tui.engine.results import RecordedResult, Results
from replay_tui.engine.seek import Step
from replay_tui.formats.run import RunPaths
from replay_tui.reducers import LoadedReducer

__all__ = [
    "CHECK_CHECKPOINT_BUDGET",
    "LedgerChanged",
    "Pending",
    "RecordedResult",
    "Replay",
    "Step",
    "open_ledger",
    "verify",
    "why_not_follow",
]

#: ``check`` never seeks, so it keeps few checkpoints (only to rebuild the
#: valid prefix after an error); the app keeps many, for fast jumps.
CHECK_CHECKPOINT_BUDGET = 8 << 20


class Replay(ForwardPass, Following, Results):
    """Strict replay of one run. Not started until :meth:`advance` is called."""


def verify(paths: RunPaths, rules: LoadedReducer, **kwargs: Any) -> Replay:
    """Open and fully check a run (the engine behind ``replay-tui check``)."""
    return Replay(paths, rules, **kwargs).verify()
