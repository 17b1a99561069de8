"""Reading the run, as a widget with nothing to draw: the ledger's reader,
the rewrite check, the watchers of the run folder and of the rules file,
and the clock on rules that do not return. Their workers die with the
screen; what they find goes up to it as messages (``Progress``,
``Advanced``, ``Rewritten``, ``RulesReloaded``...). What to do is the
session's (:class:`~replay_tui.ui.features.run.controller.RunSession`): this only runs it.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from pathlib import Path

from textual import work
from textual.widget import Widget
from textual.worker import get_current_worker
from watchfiles import awatch

from replay_tui.engine.replay import Replay
from replay_tui.formats.receipts import FRESH_SECONDS
from replay_tui.ui.features.run.controller import PERSON_SECONDS, RunSession
from replay_tui.ui.messages import (
    Advanced,
    AdvanceDone,
    AdvanceFailed,
    Notice,
    Progress,
    Rewritten,
    RulesFailed,
    RulesReloaded,
    StatusChanged,
    StuckChanged,
    VerifyDone,
)

# Longest the reader holds back after its first rows for the first screen to
# be drawn: both want the one interpreter lock, and the first screen of a
# 100 MB session came 0.2 s later while validation ran beside it.
FIRST_SCREEN_WAIT = 0.5
# Progress while a long ledger is read goes up at most this often (the last
# always): each one lays the screen out again, and at 5 a second that was a
# third of what the app added to validating.
PROGRESS_SECONDS = 1.0


#: How often a followed PostgreSQL thread is read again (seconds).
POLL_SECONDS = 0.5


class RunReader(Widget):
    """The workers that read, follow and re-check the session's replay."""

    DEFAULT_CSS = "RunReader { display: none; }"

    def __init__(self, session: RunSession) -> None:
        super().__init__()
        self.session = session
        self._first_shown = threading.Event()

    def first_view_shown(self) -> None:
        """The first screen is drawn: validation carries on at full speed."""
        self._first_shown.set()

    def on_mount(self) -> None:
        self.set_interval(0.5, self._tick_stuck_clock)
        # the watchers first: their workers start in this order, each watching
        # before its first await, so nothing written after the first read
        # begins is missed (read first, a line written meanwhile waited for
        # the next write to be seen)
        if self.session.following:
            self.watch_folder()
        if self.session.watch_rules:
            self.watch_rules_file()
        self.read()

    def _tick_stuck_clock(self) -> None:
        if self.session.tick_stuck_clock():
            self.post_message(StuckChanged(bool(self.session.stuck_note)))

    # -- the ledger -----------------------------------------------------------
    def read(self) -> None:
        """Read what was appended (one reader at a time; requests coalesce)."""
        if self.session.want_advance():
            self._reader(self.session.replay)

    def restart(self) -> None:
        """Another replay was swapped in: the old one's reader stops, the new one's starts."""
        self.workers.cancel_group(self, "advance")
        self.workers.cancel_group(self, "fill")
        self.read()

    @work(thread=True, group="advance", exit_on_error=False)
    def _reader(self, replay: Replay) -> None:
        """Read and check the ledger from where it was left, posting progress."""
        worker = get_current_worker()
        told = 0.0

        def progress(lines: int) -> None:
            nonlocal told
            size = max(replay.ledger.file_size(), 1)
            now = time.monotonic()
            more = replay.ledger.indexed_end < size
            if more and self._first_shown.is_set() and now - told < PROGRESS_SECONDS:
                return
            told = now
            self.post_message(Progress(replay, lines, replay.ledger.indexed_end / size))
            if more and not self._first_shown.is_set():
                # more to read: let the first screen be drawn first (once)
                self._first_shown.wait(FIRST_SCREEN_WAIT)
                self._first_shown.set()

        try:
            self.session.advance(
                replay,
                progress=progress,
                advanced=lambda: self.post_message(Advanced(replay, replay.valid)),
                rewritten=lambda why: self.post_message(Rewritten(replay, why)),
                cancelled=lambda: worker.is_cancelled,
            )
        except Exception as exc:
            if self.session.is_current(replay):  # not a replay already closed by a reload
                self.post_message(AdvanceFailed(replay, f"reading the ledger failed: {exc}"))
        self.post_message(AdvanceDone(replay))

    def on_advance_done(self, message: AdvanceDone) -> None:
        message.stop()
        if not self.session.is_current(message.replay):
            return
        if self.session.advance_done():
            self.read()
        else:
            self._fill_behind(message.replay)

    @work(thread=True, exclusive=True, group="fill", exit_on_error=False)
    def _fill_behind(self, replay: Replay) -> None:
        """What each event changed, made behind the pass (see the session)."""
        worker = get_current_worker()
        paused, failed = self.session.fill_behind(replay, lambda: worker.is_cancelled)
        if failed is not None:
            self.post_message(Notice(failed, severity="error", timeout=10))
        elif paused:  # the person is at the keys: on again when they stop
            self.app.call_from_thread(self.set_timer, PERSON_SECONDS, lambda: self._fill_on(replay))

    def _fill_on(self, replay: Replay) -> None:
        if self.session.is_current(replay) and not self.session.advance_running:
            self._fill_behind(replay)

    def receipt_pending(self) -> None:
        """A receipt may be half-written: look again even if no event comes."""
        self.set_timer(FRESH_SECONDS + 0.5, self._recheck_receipts)

    def _recheck_receipts(self) -> None:
        if self.session.following and self.session.replay.pending is not None:
            self.session.receipts_changed()
            self.read()

    def on_advance_failed(self, message: AdvanceFailed) -> None:
        message.stop()
        if self.session.is_current(message.replay):
            self.session.failed(message.why)
            self.notify(message.why, severity="error", timeout=10, markup=False)
            self.post_message(StatusChanged())

    # -- following ------------------------------------------------------------
    def follow(self, *, comparing: bool) -> Replay | None:
        """``f``: the replay that follows the ledger (the screen swaps it in),
        or None (said why not)."""
        refused = self.session.why_not_follow(comparing=comparing)
        if refused is not None:
            self.notify(f"not following: {refused}", severity="warning", timeout=5)
            return None
        self.notify("following the ledger: new events appear as they are written", timeout=3)
        return self.session.follow()

    @work(exclusive=True, group="watch-run")
    async def watch_folder(self) -> None:
        """Follow the run folder: inotify, no polling, so idle costs nothing
        (a PostgreSQL database has no folder: it is polled)."""
        if self.session.replay.paths.url is not None:
            while self.session.following:
                await asyncio.sleep(POLL_SECONDS)
                self.read()
            return
        async for changes in awatch(self.session.replay.paths.dir, debounce=40, step=5):
            read_on, verify = self.session.changed_files({Path(p) for _, p in changes})
            if not read_on:
                return
            self.read()
            if verify:
                self.verify()

    def stop_following(self) -> bool:
        """``F``: judge the ledger as complete: one more pass, no more
        watching. False if it was not followed (said so)."""
        if not self.session.following:
            self.notify("not following this ledger (f follows it as it grows)", timeout=3)
            return False
        self.session.unfollow()
        self.workers.cancel_group(self, "watch-run")
        self.read()
        return True

    def verify(self) -> None:
        """Prove that no byte already read changed (requests coalesce)."""
        if self.session.want_verify():
            self._verifier(self.session.replay)

    @work(thread=True, group="verify", exit_on_error=False)
    def _verifier(self, replay: Replay) -> None:
        try:
            self.session.verify(replay, lambda why: self.post_message(Rewritten(replay, why)))
        finally:
            self.post_message(VerifyDone(replay))

    def on_verify_done(self, message: VerifyDone) -> None:
        message.stop()
        if self.session.verify_done() and self.is_attached:
            self.verify()

    # -- the rules ------------------------------------------------------------
    def reload(self) -> None:
        """``R``: load the rules file (or ``--graph``'s module) again."""
        if self.session.rules_path() is None:
            self.notify(
                "rules reload needs --reducer path/to/rules.py:NAME or --graph module:attr",
                severity="warning",
            )
        else:
            self.reload_shown()

    @work(exclusive=True, group="watch-rules")
    async def watch_rules_file(self) -> None:
        path = self.session.rules_path()
        if path is None:
            return
        async for changes in awatch(path.parent, debounce=80, step=10, recursive=False):
            if any(Path(p).name == path.name for _, p in changes):
                self.reload_shown()

    def reload_shown(self) -> None:
        """Load the rules again over the replay shown now (also when a
        reload's answer came for one swapped out meanwhile: ``f``, a
        rewrite, another reload)."""
        # by weak reference: a worker done is kept a while, with its arguments
        self.reload_rules(weakref.ref(self.session.replay), self.session.swaps)

    @work(thread=True, exclusive=True, group="rules", exit_on_error=False)
    def reload_rules(self, shown: weakref.ref[Replay], swaps: int) -> None:
        """Load the rules again and re-evaluate every prefix of the replay
        ``shown`` with them."""
        worker = get_current_worker()
        replay = shown()
        if replay is None:  # swapped out and gone: an answer would be stale
            return
        found = self.session.reload(replay, lambda: worker.is_cancelled)
        # let it go before the answer: the screen may drop it at once, and
        # this thread may not be done before the answer is shown
        del replay
        if isinstance(found, str):
            self.post_message(RulesFailed(found, swaps))
        elif not worker.is_cancelled:
            self.post_message(RulesReloaded(*found, swaps))

    def on_rules_reloaded(self, message: RulesReloaded) -> None:
        """Goes on up to the screen (which shows the new replay) unless it was
        made of a replay swapped out since: then made again over the one shown."""
        if message.swaps != self.session.swaps:
            message.stop()
            message.replay.close()
            self.reload_shown()

    def on_rules_failed(self, message: RulesFailed) -> None:
        message.stop()
        if message.swaps != self.session.swaps:  # it may have failed for that
            self.reload_shown()
            return
        self.session.rules_failed()
        title = "rules failed to load"
        self.notify(message.why, title=title, severity="error", timeout=10, markup=False)
        self.post_message(StatusChanged())
