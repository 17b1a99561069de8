"""``when`` and ``history``: the searches that watch a forward pass, and
the answers from a finished replay, read from its patch log when it keeps
one, else by running the rules again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from replay_tui.questions.across.changes import PathChange, Turn, needs_of
from replay_tui.questions.across.scans import PathScan, patch_log_turns, resolve
from replay_tui.questions.across.watching import StateWatcher
from replay_tui.questions.condition import ABSENT, Condition, StatePath

if TYPE_CHECKING:
    from replay_tui.engine.replay import Replay


def _op(old: Any, new: Any) -> str:
    if old is ABSENT:
        return "added"
    if new is ABSENT:
        return "removed"
    return "changed"


class WhenSearch:
    """``when``, watching a forward pass: the seqs at which ``condition``
    turns true, and what changed at its paths there."""

    def __init__(self, condition: Condition, *, every: bool = True) -> None:
        self.condition = condition
        self.every = every
        self.watcher = StateWatcher(needs_of(condition))
        self.turns: list[Turn] = []
        self._holds = False
        self.done = False

    def start(self, state: Any) -> None:
        self.watcher.start(state)
        self._holds = self.condition.evaluate(state)
        if self._holds:
            self.turns.append(Turn(0, ()))
            self.done = not self.every

    def from_replay(self, replay: Replay) -> None:
        """Answer from a finished replay instead (its patch log, if it has one)."""
        self.turns = []
        for turn in iter_turns(replay, self.condition, replay.valid):
            self.turns.append(turn)
            if not self.every:
                break
        self.done = bool(self.turns) and not self.every

    def see(self, seq: int, state: Any, kind: str | None = None) -> None:
        moves = self.watcher.see(state)
        if moves is None:
            return
        holds = self.condition.evaluate(state)
        if holds and not self._holds and not self.done:
            self.turns.append(Turn(seq, tuple((p, o, n) for p, (o, n) in moves.items()), kind))
            self.done = not self.every
        self._holds = holds


class HistorySearch:
    """``history``, watching a forward pass: each seq at which the value at
    ``path`` changed (added, changed, removed)."""

    def __init__(self, path: StatePath) -> None:
        self.path = path
        self.watcher = StateWatcher({path: "value"})
        self.changes: list[PathChange] = []
        self.replay: Replay | None = None

    def start(self, state: Any) -> None:
        self.watcher.start(state)

    def from_replay(self, replay: Replay) -> None:
        """Answer from a finished replay instead (its patch log, if it has
        one): old and new may then be :class:`Later`, read with :meth:`value`."""
        self.replay = replay
        self.changes = list(iter_path_changes(replay, self.path, replay.valid))

    def value(self, value: Any, *, frozen: bool = False) -> Any:
        """A change's old or new value, read from the replay if left there."""
        if self.replay is None:
            return value
        return resolve(self.replay, self.path, value, frozen=frozen)

    def see(self, seq: int, state: Any, kind: str | None = None) -> None:
        moves = self.watcher.see(state)
        if moves is not None:
            old, new = moves[self.path]
            self.changes.append(PathChange(seq, _op(old, new), old, new, kind))


def iter_turns(
    replay: Replay,
    condition: Condition,
    until: int,
    cancelled: threading.Event | None = None,
) -> Iterator[Turn]:
    """Each seq in 0..until at which ``condition`` turns true, in order: from
    the patch log when the replay keeps one, else by running the rules again."""
    if replay.history is not None:
        yield from patch_log_turns(replay.history, condition, until, cancelled)
        return
    search = WhenSearch(condition)
    yield from _rerun(replay, search, search.turns, until, cancelled)


def _rerun(
    replay: Replay,
    search: WhenSearch | HistorySearch,
    found: list[Any],
    until: int,
    cancelled: threading.Event | None,
) -> Iterator[Any]:
    """``search`` over the states of the rules run again, yielding what it
    adds to ``found`` as it goes (no patch log to read)."""
    states = replay.iter_states(until, cancelled.is_set if cancelled is not None else None)
    for seq, state in states:
        count = len(found)
        if seq == 0:
            search.start(state)
        else:
            search.see(seq, state)
        yield from found[count:]


def iter_path_changes(
    replay: Replay, path: StatePath, until: int, cancelled: threading.Event | None = None
) -> Iterator[PathChange]:
    """Each seq in 1..until at which the value at ``path`` changed, in order.
    From the patch log, old and new may be :class:`Later`: see :func:`resolve`."""
    if replay.history is not None:
        yield from PathScan(replay.history, path).advance(until, cancelled)
        return
    search = HistorySearch(path)
    yield from _rerun(replay, search, search.changes, until, cancelled)


def condition_turns(
    replay: Replay, condition: Condition, until: int, cancelled: threading.Event | None = None
) -> list[Turn]:
    """Every seq in 0..until at which ``condition`` turns true (the app's way)."""
    return list(iter_turns(replay, condition, until, cancelled))


def path_changes(
    replay: Replay, path: StatePath, until: int, cancelled: threading.Event | None = None
) -> list[PathChange]:
    """Every seq in 1..until at which the value at ``path`` changed (the
    app's way), with old and new read out (:func:`resolve`)."""
    return [
        PathChange(c.seq, c.op, resolve(replay, path, c.old), resolve(replay, path, c.new))
        for c in iter_path_changes(replay, path, until, cancelled)
    ]
