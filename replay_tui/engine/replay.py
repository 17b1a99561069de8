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

A replay is the run's state (:class:`~.replay_core.ReplayCore`: the valid
prefix, the live state, checkpoints or the state store, line checksums, and
the primitives every part calls) and the parts it holds, each given that
state: :attr:`Replay.forward` (:mod:`.forward`: the forward pass, the hot
path, with :mod:`.regular_runs` and :mod:`.rules_step`), :attr:`Replay.follow`
(:mod:`.follow`: a growing ledger), :attr:`Replay.seeking` (:mod:`.seek`:
states at any prefix, steps) and :attr:`Replay.results` (:mod:`.results`: a
session's calls and their results as recorded). Its methods are theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Self

from replay_tui.engine.follow import Following
from replay_tui.engine.forward import ForwardPass
from replay_tui.engine.replay_core import (
    LedgerChanged,
    Pending,
    ReplayCore,
    open_ledger,
    why_not_follow,
)
from replay_tui.engine.results import RecordedResult, Results
from replay_tui.engine.seek import MadeAgain, RulesNotDeterministic, Seeking, Step
from replay_tui.formats.envelope import Event
from replay_tui.formats.ledger import LedgerRewritten
from replay_tui.formats.run import RunPaths
from replay_tui.reducers import LoadedReducer
from replay_tui.reducers.base import State, StateView

__all__ = [
    "CHECK_CHECKPOINT_BUDGET",
    "LedgerChanged",
    "Pending",
    "RecordedResult",
    "Replay",
    "RulesNotDeterministic",
    "Step",
    "open_ledger",
    "verify",
    "why_not_follow",
]

#: ``check`` never seeks, so it keeps few checkpoints (only to rebuild the
#: valid prefix after an error); the app keeps many, for fast jumps.
CHECK_CHECKPOINT_BUDGET = 8 << 20


class Replay(ReplayCore):
    """Strict replay of one run. Not started until :meth:`advance` is called."""

    def _hold_parts(self) -> None:
        self.follow = Following(self)
        self.forward = ForwardPass(self, self.follow)
        self.seeking = Seeking(self)
        self.results = Results(self, self.seeking)
        self.again = MadeAgain(self)
        if self.history is not None and self.patches_made_again:
            self.history.make_again_with(self.again.patches, self.again.watch)

    # the forward pass
    def advance(
        self,
        *,
        progress: Callable[[int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        every: int = 8192,
        limit: int | None = None,
    ) -> int:
        """Check and apply the complete lines appended since the last call
        (see :meth:`.forward.ForwardPass.advance`). Returns the lines indexed."""
        return self.forward.advance(
            progress=progress, cancelled=cancelled, every=every, limit=limit
        )

    def finish(self) -> None:
        """The ledger is complete: judge an unterminated last line, warn of orphans."""
        self.forward.finish()

    def verify(self) -> Self:
        """Read the whole ledger as it is now and judge it (``check``)."""
        self.forward.verify()
        return self

    @property
    def line_core(self) -> str:
        """Which path proves this history's lines: ``native`` or ``python``."""
        return self.forward.line_core

    @property
    def rules_core(self) -> str:
        """Which rules proved its events: ``native`` (the built-in
        ``agent_run`` rules' native twin, for some) or ``python``."""
        return self.forward.rules_core

    # a growing ledger
    def stop_following(self) -> None:
        """From now on the ledger is judged as complete: strict rules again."""
        self.follow.stop_following()

    def retry_pending(self) -> None:
        """A file arrived: let the line waiting for its receipt try again."""
        self.follow.retry_pending()

    def find_rewrite(self) -> LedgerRewritten | None:
        """Whether any byte already read changed, and if so where (O(bytes read))."""
        return self.follow.find_rewrite()

    def locate_rewrite(self, exc: LedgerRewritten) -> LedgerRewritten:
        """Where history changed, when the ledger could only say that it did."""
        return self.follow.locate_rewrite(exc)

    # prefixes of the valid run
    def state_at(self, n: int) -> State:
        """A fresh copy of the state after the first ``n`` events (0..valid)."""
        return self.seeking.state_at(n)

    def frozen_at(self, n: int) -> StateView:
        """The state after the first ``n`` events, frozen: not to be changed."""
        return self.seeking.frozen_at(n)

    def final_state(self) -> State:
        """A fresh copy of the state after the valid prefix."""
        return self.seeking.final_state()

    def step(self, seq: int) -> Step:
        """What event ``seq`` (1..valid) changed, and the rule in words."""
        return self.seeking.step(seq)

    def iter_states(
        self, until: int, cancelled: Callable[[], bool] | None = None, start: int = 0
    ) -> Iterator[tuple[int, State]]:
        """(n, state after n events) for n = start..until, the rules run again."""
        return self.seeking.iter_states(until, cancelled, start)

    def final_summary(self) -> tuple[str, str]:
        """(summary word, sha256 of the canonical state) after the valid prefix."""
        return self.seeking.final_summary()

    def still_open(self) -> list[str]:
        """What the rules say the valid prefix leaves open."""
        return self.seeking.still_open()

    def notes(self) -> list[str]:
        """What the rules say a person should know of the valid prefix's state."""
        return self.seeking.notes()

    # recorded results
    def recorded_result(self, event: Event | None, n: int) -> RecordedResult | None:
        """The call ``event`` requests or answers, with its result as known after 1..n."""
        return self.results.recorded_result(event, n)


def verify(paths: RunPaths, rules: LoadedReducer, **kwargs: Any) -> Replay:
    """Open and fully check a run (the engine behind ``replay-tui check``)."""
    return Replay(paths, rules, **kwargs).verify()
