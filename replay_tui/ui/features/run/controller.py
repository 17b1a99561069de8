"""The run being shown, without Textual: which replay it is, reading and
following it, rewrites, rules reloads and the clock on rules that do not
return.

The screen runs the workers (they die with it) and hands their results
here; this says what to do next and keeps its piece of the status line.
It never calls the screen: where a worker must post, the screen passes
the function that posts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.engine.open import reopen
from replay_tui.engine.replay import LedgerChanged, Replay, RulesNotDeterministic, why_not_follow
from replay_tui.formats.ledger import LedgerRewritten
from replay_tui.questions.rules_diff import first_difference, still_reading
from replay_tui.reducers import load_reducer
from replay_tui.views.runview import RunView

#: Shortest pause between two passes of the rewrite check (seconds).
VERIFY_GAP = 0.2

#: Compare mode and following never go together (the CLI says the same).
COMPARE_FINISHED = "compare mode compares two finished runs"

#: A place kept through a rewrite: the seq the person was on, or None if
#: the cursor was riding the tail.
Place = tuple[int | None]


#: Work behind the pass waits this long after the person's last key (seconds).
PERSON_SECONDS = 1.0


class RunSession:
    """One run on screen, through every replay of it (follow, rewrite, reload)."""

    def __init__(
        self,
        replay: Replay,
        *,
        label: str | None = None,
        reducer_spec: str | None = None,
        watch_rules: bool = False,
    ) -> None:
        self.replay = replay
        self.view = RunView(replay)
        self.label = label or replay.paths.name
        self.reducer_spec = reducer_spec
        self.watch_rules = watch_rules
        self.following = replay.following
        #: Replays swapped in so far: a worker's answer made of the replay
        #: shown when it began says this count, and is stale if it moved on
        #: (a count, not the replay: an answer kept would keep it alive).
        self.swaps = 0
        #: Validation read this fraction of the ledger.
        self.fraction = 0.0
        #: A line of its own in the status bar (a rewrite, a failed read).
        self.banner = ""
        self.rewrite_note = ""
        self.rules_note = ""
        self.stuck_note = ""
        self._dirty = False
        self._advance_running = False
        self._person_at = 0.0  # when a key or the mouse was last used
        #: Events validated when the last pass the screen has shown ended.
        self.shown_valid = -1
        self._verify_running = False
        self._verify_dirty = False
        self._stop_following = False
        self._receipts_changed = False
        #: After a rewrite: where the person was, kept until the new history is read.
        self._rewrite_place: Place | None = None

    # -- which replay -------------------------------------------------------
    def swap(self, replay: Replay) -> Replay:
        """Show ``replay`` from now on; the one it replaces, for the caller to close."""
        old, self.replay = self.replay, replay
        self.swaps += 1
        self.view = RunView(replay)
        self._advance_running = False
        self.shown_valid = -1
        return old

    def is_current(self, replay: Replay) -> bool:
        return replay is self.replay

    # -- reading ------------------------------------------------------------
    def want_advance(self) -> bool:
        """Something may have been appended: True if a reader must start
        (one reader at a time; requests while it runs coalesce into one more pass)."""
        self._dirty = True
        if self._advance_running:
            return False
        self._advance_running = True
        return True

    def advance_done(self) -> bool:
        """The reader stopped: True if another pass is due."""
        self._advance_running = False
        return self._dirty

    def receipts_changed(self) -> None:
        """A receipt was written: a call waiting for it may go on."""
        self._receipts_changed = True

    def advance(
        self,
        replay: Replay,
        *,
        progress: Callable[[int], None],
        advanced: Callable[[], object],
        rewritten: Callable[[str], object],
        cancelled: Callable[[], bool],
    ) -> None:
        """Read and check the ledger from where it was left, until nothing
        more was asked for (the body of the screen's reader worker)."""
        while not cancelled():
            self._dirty = False
            if self._receipts_changed:
                self._receipts_changed = False
                replay.retry_pending()
            try:
                if replay.following:  # cheap checks; verify() rehashes it all
                    replay.ledger.check_unchanged()
                replay.advance(progress=progress, cancelled=cancelled, every=2048)
                if self._stop_following or not replay.following:
                    replay.finish()
                if replay.finished:
                    replay.still_open()  # read once here, not when End is pressed
            except LedgerRewritten as exc:
                rewritten(str(replay.locate_rewrite(exc)))
                return
            advanced()
            if not self._dirty:
                return

    @property
    def advance_running(self) -> bool:
        """A reader is reading the ledger."""
        return self._advance_running

    def person_acts(self) -> None:
        """A key or the mouse: work behind the pass gives way for a while."""
        self._person_at = time.monotonic()

    def fill_behind(self, replay: Replay, cancelled: Callable[[], bool]) -> tuple[bool, str | None]:
        """Behind the pass, where it records no patches: the patch log made
        for every event read, a kept state's span at a time, so that the
        questions across time find it made. It gives way as soon as there
        is more to read, while the person presses keys (both want the
        one interpreter lock: a key took three times as long beside it), and
        while a question runs the rules again where the log is not made.
        (Whether it gave way to the person, to go on when they stop; what
        went wrong, to tell.)"""
        history = replay.history
        if history is None or not history.made_again or not self.is_current(replay):
            return False, None

        gave_way = False

        def stop() -> bool:
            nonlocal gave_way
            if cancelled() or self._dirty or self._advance_running:
                return True
            # a key lately, or a question running the rules again: told as
            # it stops, since either may be over by the time it returns
            busy = time.monotonic() - self._person_at < PERSON_SECONDS or history.watching > 0
            gave_way = gave_way or busy
            return busy

        try:
            log = history.patch_log(replay.valid, stop)
        except (RulesNotDeterministic, LedgerChanged) as exc:
            return False, f"the history of changes cannot be made: {exc}"
        except (OSError, ValueError):
            return False, None  # the file went away or was closed by a reload: the reader says so
        paused = gave_way and len(log) < replay.valid and not cancelled()
        return paused, None

    def want_verify(self) -> bool:
        """The ledger changed: True if a rewrite check must start (requests coalesce)."""
        self._verify_dirty = True
        if self._verify_running:
            return False
        self._verify_running = True
        return True

    def verify_done(self) -> bool:
        """The rewrite check stopped: True if another is due."""
        self._verify_running = False
        return self._verify_dirty and self.following

    def verify(self, replay: Replay, rewritten: Callable[[str], object]) -> None:
        """Rehash what was read each time the ledger changes, whatever else
        changed with it (an append in the same moment hides an edit from
        the cheap checks). A pass costs what was read (about 70 ms per 100 MB
        here), so passes are spaced by as long as the last took: at most
        half a core, and an edit is named within two passes."""
        try:
            while self._verify_dirty and replay is self.replay and replay.following:
                self._verify_dirty = False
                started = time.perf_counter()
                found = replay.find_rewrite()
                if found is not None:
                    rewritten(str(found))
                    return
                time.sleep(max(VERIFY_GAP, time.perf_counter() - started))
        except (OSError, ValueError):
            pass  # the file went away or was closed by a reload: the reader says so

    def changed_files(self, names: set[Path]) -> tuple[bool, bool]:
        """Files of the run folder changed: (read on, check for a rewrite)."""
        folder = self.replay.paths.dir
        if any("receipts" in p.parts[len(folder.parts) :] for p in names):
            self._receipts_changed = True
        return self.following, self.following and self.replay.paths.events in names

    # -- following ----------------------------------------------------------
    def why_not_follow(self, comparing: bool) -> str | None:
        """Why ``f`` cannot follow this run (None: it can)."""
        refused = why_not_follow(self.replay.paths)
        if refused is None and comparing:
            refused = f"{COMPARE_FINISHED}: Esc leaves compare mode, then f follows"
        return refused

    def follow(self) -> Replay:
        """Follow from now on: the replay to show (the caller swaps it in)."""
        self.following = True
        self._stop_following = False
        return reopen(self.replay, following=True)

    def unfollow(self) -> None:
        """Judge the ledger as complete, strictly, at the next pass."""
        self.following = False
        self._stop_following = True

    @property
    def up_to_date(self) -> bool:
        """The screen shows all that was read: no pass is running and the
        last one's end has been shown (its rows, folded calls, tree)."""
        return not self._advance_running and self.shown_valid == self.replay.valid

    def advanced(self, valid: int) -> None:
        """The screen shows a pass that ended with ``valid`` events
        validated; a run that finished is followed no more."""
        self.shown_valid = valid
        if self.replay.finished and self.following:
            self.following = False

    # -- rewrites -----------------------------------------------------------
    def rewritten(self, why: str, place: Place) -> Replay:
        """The ledger changed under what was read: the replay that reads it
        again (the caller swaps it in). ``place`` is kept through a second
        rewrite while the first is read again."""
        if self._rewrite_place is None:
            self._rewrite_place = place
        self.banner = f"history changed: {why}; reading it again from the start"
        self.rewrite_note = why
        return reopen(self.replay, following=self.following)

    def after_rewrite(self) -> tuple[str, Place] | None:
        """The new history is read: what to tell the person, and where they
        were; None if no rewrite was being read."""
        if self._rewrite_place is None:
            return None
        place, self._rewrite_place = self._rewrite_place, None
        self.banner = ""
        r = self.replay
        verdict = plural(r.valid, "valid event", sep=True)
        if r.error is not None:
            verdict += f", then {r.error.code} at line {r.error.line}"
        return f"history changed ({self.rewrite_note}): read again, {verdict}", place

    def failed(self, why: str) -> None:
        self.banner = why

    # -- rules --------------------------------------------------------------
    def rules_path(self) -> Path | None:
        """The rules file the person gave (``--reducer path.py:NAME``), or
        the module of their graph (``--graph module:attr``), if any."""
        target = (self.reducer_spec or "").rpartition(":")[0]
        if target.endswith(".py"):
            return Path(target).resolve()
        graph = getattr(self.replay.reducer, "graph", None)
        where = getattr(getattr(graph, "module", None), "__file__", None)
        return Path(where).resolve() if isinstance(where, str) else None

    def reload(self, old: Replay, cancelled: Callable[[], bool]) -> tuple[Replay, int | None] | str:
        """Load the rules again and re-evaluate every prefix of ``old`` (the
        replay shown when the reload began) with them: the new replay and the
        first seq that differs, or why it failed (the last good rules stay)."""
        try:
            rules = load_reducer(self.reducer_spec, again=True)
            new = reopen(old, rules=rules)  # the app's clock watches these rules too
            new.advance(cancelled=cancelled)
            if not new.following:
                new.finish()
            if not still_reading(old):
                return new, first_difference(old, new)
            # the replay shown has not read what the new one has (a followed
            # run being caught up on): the last rules run again as far
            last = reopen(old)
            try:
                last.advance(cancelled=cancelled)
                return new, first_difference(last, new)
            finally:
                last.close()
        except CannotRun as exc:
            return str(exc)
        except Exception as exc:  # the new rules are broken: keep the last good ones
            return f"{type(exc).__name__}: {exc}"

    def rules_reloaded(self, difference: int | None) -> None:
        sha = self.replay.rules.rules_sha256[:12]
        if difference is None:
            self.rules_note = f"rules {sha}: same states and verdict as before"
            self.view.difference_index = None
        else:
            self.rules_note = f"rules {sha}: first difference at seq {difference}"
            self.view.difference_index = difference - 1

    def rules_failed(self) -> None:
        self.rules_note = "rules failed to load; keeping the last good rules"

    def tick_stuck_clock(self) -> bool:
        """Say when the rules have not returned for a while, and stop them
        past the timeout (they then fail with reducer_error at that seq).
        True if what the status says of it changed."""
        watch = self.replay.watch
        run = watch.oldest()
        note = ""
        if run is not None:
            seconds = run.seconds()
            limit = watch.timeout
            where = f"seq {run.seq}" if run.seq is not None else "the summary"
            # (never interrupt this thread: the UI itself runs here)
            mine = run.thread_id == threading.get_ident()
            if limit and seconds > limit and not run.interrupted and not mine:
                watch.interrupt(run)
            if run.interrupted and limit and seconds > limit + 5:
                note = f"rules stuck on {where}, cannot be stopped: fix them (q quits)"
            elif seconds >= 2:
                note = f"rules busy {seconds:.0f} s on {where}"
                if limit:
                    note += f", stopped at {limit:g} s"
        if note == self.stuck_note:
            return False
        self.stuck_note = note
        return True

    # -- the status line ----------------------------------------------------
    def verdict(
        self, text: Text, *, validating: bool, error_waiting: bool, short: bool = False
    ) -> None:
        """``● LIVE`` and the verdict so far (``short``: in fewer words, for
        a narrow terminal)."""
        r = self.replay
        if self.following:
            text.append(" ● LIVE ", style="bold white on #2f6f4f")
            text.append(" ")
        if r.error is not None:
            where = (
                f"seq {r.error.seq}"
                if r.error.seq is not None
                else (f"line {r.error.line}" if r.error.line is not None else "start")
            )
            said = (
                f" ✗ {where}: {r.error.code} " if short else f" ✗ error at {where}: {r.error.code} "
            )
            text.append(said, style="bold white on #a03030")
            if error_waiting and not short:
                text.append(" — e to go there", style="bold #e78284")
        elif self.following:
            if not r.ledger.exists:
                text.append(" waiting for events.jsonl ", style="bold black on #e5c890")
            elif r.pending is not None:
                text.append(
                    f" receipt pending: {escape_controls(r.pending.name)} ",
                    style="bold black on #e5c890",
                )
            else:
                text.append(
                    " ✓ so far " if short else " ✓ valid so far ", style="bold black on #a6d189"
                )
        elif validating:
            text.append(f" validating {self.fraction:.0%} ", style="bold black on #e5c890")
        else:
            text.append(" ✓ " if short else " ✓ verified ", style="bold black on #a6d189")

    def notes(self, text: Text, stuck: Text) -> None:
        """The rules' notes: reloaded (``text``), or busy (``stuck``)."""
        if self.rules_note:
            text.append(f"  {escape_controls(self.rules_note)}", style="#ca9ee6")
        if self.stuck_note:
            stuck.append(f"  ⏳ {self.stuck_note}", style="bold #ef9f76")
