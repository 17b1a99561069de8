"""The ``:`` condition and the ``/`` filter as the screen uses them: a
widget with nothing to draw that runs :class:`~replay_tui.ui.features.search.controller.Search`
(no Textual there) with its scans, as workers, and its words. Where the
condition turns true goes up to the screen as ``TurnFound`` (the screen
moves the cursor); the rows a filter keeps, as ``FilterReady``."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import work
from textual.widget import Widget
from textual.worker import get_current_worker

from replay_tui.engine.replay import Replay
from replay_tui.questions.across import iter_turns
from replay_tui.questions.condition import Condition
from replay_tui.ui.cancel import WorkerCancelled
from replay_tui.ui.features.search.controller import Search, Turn, turn_in
from replay_tui.ui.messages import FilterReady, StatusChanged, TurnFound, TurnsReady
from replay_tui.views.resume_rail import RESUME_FILTER
from replay_tui.views.runview import RunView


class SearchKeeper(Widget):
    """``:`` with a condition, ``n`` / ``N``, ``/`` and what Esc forgets of them."""

    DEFAULT_CSS = "SearchKeeper { display: none; }"

    def __init__(self, search: Search, view: Callable[[], RunView]) -> None:
        super().__init__()
        self.search = search
        #: The run view shown (the screen swaps replays).
        self._view = view

    @property
    def _replay(self) -> Replay:
        return self._view().replay

    # -- the condition -------------------------------------------------------
    def ask(self, condition: Condition, after: int, direction: int = 1) -> None:
        """Where does ``condition`` turn true next past seq ``after``?"""
        self.search.ask(condition)
        self._find_turns(self._replay, condition, after, direction)
        self.post_message(StatusChanged())

    @work(thread=True, exclusive=True, group="turns", exit_on_error=False)
    def _find_turns(self, replay: Replay, condition: Condition, after: int, direction: int) -> None:
        """Every seq where ``condition`` turns true; the first one past
        ``after`` (before it, for -1) is posted as soon as it is known."""
        cancelled = WorkerCancelled(get_current_worker())
        until, started = replay.valid, time.perf_counter()
        seqs: list[int] = []
        posted = False
        for turn in iter_turns(replay, condition, until, cancelled):
            seqs.append(turn.seq)
            if not posted and direction > 0 and turn.seq > after:
                posted = True
                self.post_message(TurnFound(condition, turn.seq, wrapped=False))
        if cancelled.is_set():
            return
        found = None if posted else turn_in(seqs, after, direction)
        if found is not None:
            self.post_message(TurnFound(condition, found.seq, wrapped=found.wrapped))
        self.post_message(TurnsReady(condition, seqs, until, time.perf_counter() - started))

    def on_turn_found(self, message: TurnFound) -> None:
        """Goes on up to the screen (which goes there) if still asked."""
        if message.condition is not self.search.condition:
            message.stop()
        elif message.wrapped:
            said = f"wrapped: {message.condition.text} turns true at seq {message.seq}"
            self.notify(said, timeout=3, markup=False)

    def on_turns_ready(self, message: TurnsReady) -> None:
        message.stop()
        if message.condition is not self.search.condition:
            return
        self.search.answered(message.seqs, message.until)
        if not message.seqs:
            said = self.search.never_said(message.until, message.seconds)
            self.notify(said, severity="warning", timeout=6, markup=False)
        self.post_message(StatusChanged())

    def next_match(self, here: int, direction: int) -> Turn | str | None:
        """``n`` / ``N`` at seq ``here``: the condition's next turn, ``"step"``
        (a filter is on: the next row it keeps), or None (said why)."""
        condition = self.search.condition
        if condition is None:
            if self.search.filter_text and self.search.matches is not None:
                return "step"
            said = "nothing to repeat: : takes a condition, / a filter"
            self.notify(said, severity="information")
            return None
        if self.search.turn_seqs is None:
            self.notify("still searching…", timeout=2)
        elif self.search.stale(self._replay.valid):  # the run grew: search it all again
            self.ask(condition, here, direction)
        elif (turn := self.search.next_turn(here, direction)) is None:
            self.notify(f"never: {condition.text}", severity="warning", markup=False)
        else:
            if turn.wrapped:
                end = "start" if direction > 0 else "end"
                self.notify(f"wrapped to the {end}: seq {turn.seq}", timeout=2)
            return turn
        return None

    def forget(self) -> bool:
        """Esc: forget the condition (the filter is the screen's to clear);
        False if there was none."""
        if not self.search.forget():
            return False
        self.workers.cancel_group(self, "turns")
        self.post_message(StatusChanged())
        return True

    # -- the filter ----------------------------------------------------------
    def resume_chain(self, view: RunView, seq: int, apply: Callable[[str], None]) -> None:
        """``m``: only what ``claude --resume`` from the record at ``seq``
        loads (a filter, so Esc, n / N and the status work as for any);
        again: every row. ``apply`` sets the filter as the screen does."""
        if self.search.filter_text.startswith(RESUME_FILTER):
            apply("")
            return
        query = view.resume_query(seq)
        if query is None:
            self.notify("m shows what claude --resume loads: in a Claude Code session", timeout=3)
        else:
            apply(query)

    def set_filter(self, query: str) -> bool:
        """Keep the rows matching ``query`` (scanned in a worker); False if
        the filter is now off."""
        query = self.search.set_filter(query)
        if query:
            self._run_filter(self._view(), query)
        self.post_message(StatusChanged())
        return bool(query)

    @work(thread=True, exclusive=True, group="filter", exit_on_error=False)
    def _run_filter(self, view: RunView, query: str) -> None:
        worker = get_current_worker()
        found = view.matches(query, cancelled=lambda: worker.is_cancelled)
        if found is not None and not worker.is_cancelled:
            self.post_message(FilterReady(query, found))

    def on_filter_ready(self, message: FilterReady) -> None:
        """Goes on up to the screen (which shows the rows) if still asked."""
        if message.query != self.search.filter_text:
            message.stop()
            return
        self.search.matches = message.found
        if not len(message.found):
            self.notify(f"no rows match {message.query!r}", severity="warning", markup=False)
