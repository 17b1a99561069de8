"""The run on screen: timeline, state diff and receipt inspector.

Layout lives in ``app.tcss``. Blocking work (validating the ledger, replaying
to the cursor, searching) runs in thread workers that talk back only through
messages; widgets get attributes down and send messages up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, cast

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker
from watchfiles import awatch

from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import clip, escape_controls, mask_secrets
from replay_tui.engine.open import reopen
from replay_tui.engine.replay import Replay, why_not_follow
from replay_tui.formats.ledger import LedgerRewritten
from replay_tui.formats.receipts import FRESH_SECONDS
from replay_tui.handover.bookmarks import Bookmarks, state_dir
from replay_tui.handover.document import refuse_inside_run, write_report
from replay_tui.questions.across import PathChange, PathScan, iter_path_changes, iter_turns, resolve
from replay_tui.questions.condition import Condition, StatePath, format_path
from replay_tui.questions.rules_diff import first_difference
from replay_tui.questions.sidebyside import row_differences
from replay_tui.reducers import load_reducer
from replay_tui.state import canonical
from replay_tui.state.persistent import thaw
from replay_tui.ui.compare import Comparison
from replay_tui.ui.footer import FittedFooter
from replay_tui.ui.marks import Marks
from replay_tui.ui.messages import (
    Advanced,
    AdvanceDone,
    AdvanceFailed,
    BookmarksFailed,
    BookmarksLoaded,
    Differences,
    FilterReady,
    OtherSideDone,
    Progress,
    ReportDone,
    Rewritten,
    RulesFailed,
    RulesReloaded,
    TurnFound,
    TurnsReady,
    VerifyDone,
    ViewReady,
    WatchFound,
)
from replay_tui.ui.panes import ReceiptPane, StatePane
from replay_tui.ui.screens import (
    FilterScreen,
    GotoScreen,
    HelpScreen,
    NoteScreen,
    PromptHost,
    PromptScreen,
)
from replay_tui.ui.search import Search
from replay_tui.ui.tail import TailRider
from replay_tui.ui.timeline import Timeline
from replay_tui.ui.watch import WatchPane
from replay_tui.views.runview import LineView, RunView


class _Cancelled(threading.Event):
    """A scan's cancel flag read from its worker: a worker cancelled (Esc, a
    new search) stops its scan at the next chunk."""

    def __init__(self, worker: Any) -> None:
        super().__init__()
        self._worker = worker

    def is_set(self) -> bool:
        return bool(self._worker.is_cancelled)


#: (binding keys, action, description, keys as shown in help, footer label or "")
KEYS: list[tuple[str, str, str, str, str]] = [
    ("down,j", "step(1)", "Next event", "↓ / j", ""),
    ("up,k", "step(-1)", "Previous event (before event 1: the initial state)", "↑ / k", ""),
    ("pagedown", "page(1)", "Page down", "PgDn", ""),
    ("pageup", "page(-1)", "Page up", "PgUp", ""),
    ("home,g", "first", "First event", "Home / g", ""),
    ("end,G", "last", "Last event (and ride the tail when following)", "End / G", ""),
    (
        "colon",
        "goto",
        "Go to a seq (0: the initial state), or to where a condition turns true",
        ":",
        "Go to",
    ),
    ("e", "problem(1)", "Next error or warning", "e", "Next problem"),
    ("E", "problem(-1)", "Previous error or warning", "E", ""),
    ("slash", "filter", "Filter rows by kind, call_id or text", "/", "Filter"),
    ("n", "match(1)", "Next match: where the : condition turns true, or the filter's row", "n", ""),
    ("N", "match(-1)", "Previous match (condition or filter)", "N", ""),
    ("space", "play", "Play / pause at the recorded pace", "space", "Play"),
    ("plus,equals_sign", "speed(2.0)", "Play faster", "+", ""),
    ("minus", "speed(0.5)", "Play slower", "-", ""),
    ("d", "toggle_full", "State diff / full state", "d", "Diff/full"),
    ("r", "toggle_reveal", "Reveal / mask secret-looking values", "r", "Secrets"),
    ("x", "toggle_expand", "Expand / cut long values", "x", ""),
    ("y", "copy_state", "Copy the state at the cursor as JSON", "y", "Copy"),
    ("c", "copy_link", "Copy a link to this seq (RUN@SEQ: replay-tui opens it there)", "c", ""),
    ("b", "bookmark", "Bookmark this event, or remove its bookmark", "b", "Bookmark"),
    ("B", "next_bookmark", "Next bookmark (Ctrl+P lists them with their notes)", "B", ""),
    ("a", "annotate", "Attach a one-line note to this event (bookmarks it)", "a", ""),
    ("s", "skip_event", "What if this event had not happened: compare with that branch", "s", ""),
    ("right_square_bracket", "difference(1)", "Compare mode: next row where A and B part", "]", ""),
    (
        "left_square_bracket",
        "difference(-1)",
        "Compare mode: previous row where they part",
        "[",
        "",
    ),
    (
        "X",
        "write_report",
        "Write a report (Markdown) of the bookmarks and this seq into the current folder",
        "X",
        "",
    ),
    (
        "escape",
        "escape",
        "Stop watching; else leave compare mode; else forget the condition, the filter "
        "and a jump waiting for validation",
        "Esc",
        "",
    ),
    ("f", "follow", "Follow the growing ledger (ride the tail)", "f", "Follow"),
    ("F", "unfollow", "Stop following (judge the ledger as complete)", "F", ""),
    ("R", "reload_rules", "Reload the rules file and re-run every prefix", "R", ""),
    ("question_mark", "help", "Help: every key", "?", "Help"),
    ("q", "quit", "Quit", "q", "Quit"),
]

#: Footer keys, most needed first (the help screen keeps the table's order).
FOOTER_ORDER = [
    "help",
    "quit",
    "goto",
    "toggle_full",
    "problem(1)",
    "filter",
    "play",
    "follow",
    "bookmark",
    "toggle_reveal",
    "copy_state",
]

#: Keys of the focused pane (its own bindings), for the help screen.
PANE_KEYS: list[tuple[str, str]] = [
    ("Tab / Shift+Tab", "Move focus: timeline, state, watch list, receipt (the lit border)"),
    ("↑ ↓ PgUp PgDn Home End", "In the receipt pane: scroll it"),
    ("↑ ↓ PgUp PgDn Home End", "In the state pane: move its row cursor (j / k still step)"),
    ("Enter / → , ←", "In the state pane: open / close the container at the cursor"),
    ("w", "In the state pane: watch the path at the cursor (every seq it changed)"),
    ("Enter", "In the watch list: go to that seq (Esc stops watching)"),
]

#: A run_id cut to fit the header keeps at least this many characters.
MIN_RUN_ID = 12

#: Shortest pause between two passes of the rewrite check (seconds).
VERIFY_GAP = 0.2

#: Compare mode and following never go together (the CLI says the same).
COMPARE_FINISHED = "compare mode compares two finished runs"

#: Playback pace when events carry no ``ts`` (events per second at speed 1).
FIXED_PACE = 4.0
#: A view that took longer than this on the UI thread sends the next ones to a worker.
INLINE_VIEW_SECONDS = 0.03


class ReplayScreen(Screen[None]):
    """The run on screen: layout, the keys that work from every pane, the
    workers (they die with the screen) and what they tell it."""

    # The footer lists keys in this order, so a short one (80 columns) keeps
    # the ones a newcomer needs first: help and quit, then go to and the rest.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(keys, action, footer or desc, show=bool(footer), key_display=shown)
        for keys, action, desc, shown, footer in sorted(
            KEYS, key=lambda k: FOOTER_ORDER.index(k[1]) if k[1] in FOOTER_ORDER else 99
        )
    ]

    full_state: reactive[bool] = reactive(False)
    reveal: reactive[bool] = reactive(False)
    expand: reactive[bool] = reactive(False)
    playing = var(False, toggle_class="-playing")
    speed: reactive[float] = reactive(1.0)
    validating = var(True, toggle_class="-validating")
    live = var(False, toggle_class="-live")
    failed = var(False, toggle_class="-failed")
    #: Rules (not built in) have been inside one call for seconds.
    stuck = var(False, toggle_class="-stuck")
    #: A state path is watched: the watch pane is shown.
    watching = var(False, toggle_class="-watching")

    def __init__(
        self,
        replay: Replay,
        *,
        label: str | None = None,
        reducer_spec: str | None = None,
        watch_rules: bool = False,
        start_seq: int | None = None,
        against: Replay | None = None,
        strict_events: bool = False,
    ) -> None:
        super().__init__()
        #: Compare mode: B beside this run (another run, other rules, or a
        #: what-if branch: ``against.skip``), and where they part.
        self.compare = Comparison(against, strict=strict_events)
        #: Go to this seq (a RUN@SEQ link, or ``:`` past the validated
        #: prefix) once validation reaches it.
        self._pending_seq = start_seq
        #: The person's bookmarks of this ledger (loaded in a worker).
        self.marks = Marks()
        self.replay = replay
        self.view = RunView(replay)
        self.label = label or replay.paths.name
        self.reducer_spec = reducer_spec
        self.watch_rules = watch_rules
        self.following = replay.following
        #: While following, the cursor rides the tail until the person moves it.
        self.tail = TailRider()
        self._dirty = False
        self._advance_running = False
        self._verify_running = False
        self._verify_dirty = False
        #: After a rewrite: where the person was (None: riding the tail), kept
        #: until the new history is read.
        self._rewrite_place: tuple[int | None] | None = None
        self._stop_following = False
        self._receipts_changed = False
        self.banner = ""
        self.rewrite_note = ""
        self.rules_note = ""
        self.stuck_note = ""
        #: The ``:`` condition and the ``/`` filter.
        self.search = Search()
        self._fraction = 0.0
        self._line_view: LineView | None = None
        self._play_timer: Timer | None = None
        self._jumped_to_error = False
        #: The person moved the cursor: it is theirs, validation does not pull it.
        self._person_moved = False
        #: An error found after the person moved: where it is, until they go there.
        self._error_waiting: int | None = None
        self._slow_views = False
        #: Prefix 0 is shown (the initial state, before event 1).
        self.at_initial = False
        self._initial_move: int | None = None  # the app's own move to row 0 for it
        #: The watched path, and where it changed (grows while scanning, and
        #: as a followed run grows: scanned up to seq ``_watch_until``).
        self.watched: StatePath | None = None
        self._watch_until = 0
        self.watch_changes: list[PathChange] = []
        self._watch_done = False

    # -- layout -------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="main"):
            yield Timeline(self.view, id="timeline")
            with Vertical(id="side"):
                yield StatePane(id="state")
                yield WatchPane(id="watch")
                yield ReceiptPane(id="receipt")
        yield FittedFooter()

    @property
    def riding(self) -> bool:
        """The cursor rides the tail of the growing ledger."""
        return self.tail.riding

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    def on_mount(self) -> None:
        self.query_one("#state").border_title = "state"
        self.query_one("#receipt").border_title = "receipt"
        self.timeline.border_title = "timeline"
        self.timeline.focus()
        self.live = self.following
        self.set_interval(0.5, self._watch_rules_clock)
        self.request_advance()
        self.load_bookmarks()
        if self.compare.b is not None:
            self.advance_b(self.compare.b)
        if self.following:
            self.watch_run()
        if self.watch_rules:
            self.watch_rules_file()
        self.refresh_status()

    def _watch_rules_clock(self) -> None:
        """Say when the rules have not returned for a while, and stop them
        past the timeout (they then fail with reducer_error at that seq)."""
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
        if note != self.stuck_note:
            self.stuck_note = note
            self.stuck = bool(note)
            self.refresh_status()

    # -- workers ----------------------------------------------------------
    def request_advance(self) -> None:
        """Read what was appended (one reader at a time; requests coalesce)."""
        self._dirty = True
        if not self._advance_running:
            self._advance_running = True
            self.advance_worker(self.replay)

    @work(thread=True, group="advance", exit_on_error=False)
    def advance_worker(self, replay: Replay) -> None:
        """Read and check the ledger from where it was left, posting progress."""
        try:
            self._advance(replay)
        except Exception as exc:
            if replay is self.replay:  # not a replay already closed by a reload
                self.post_message(AdvanceFailed(replay, f"reading the ledger failed: {exc}"))
            self.post_message(AdvanceDone(replay))

    def _advance(self, replay: Replay) -> None:
        worker = get_current_worker()

        def progress(lines: int) -> None:
            size = max(replay.ledger.file_size(), 1)
            self.post_message(Progress(replay, lines, replay.ledger.indexed_end / size))

        while not worker.is_cancelled:
            self._dirty = False
            if self._receipts_changed:
                self._receipts_changed = False
                replay.retry_pending()
            try:
                if replay.following:  # cheap checks; verify_worker rehashes it all
                    replay.ledger.check_unchanged()
                replay.advance(progress=progress, cancelled=lambda: worker.is_cancelled, every=2048)
                if self._stop_following or not replay.following:
                    replay.finish()
            except LedgerRewritten as exc:
                self.post_message(Rewritten(replay, str(replay.locate_rewrite(exc))))
                break
            self.post_message(Advanced(replay))
            if not self._dirty:
                break
        self.post_message(AdvanceDone(replay))

    @work(exclusive=True, group="watch-run")
    async def watch_run(self) -> None:
        """Follow the run folder: inotify, no polling, so idle costs nothing."""
        folder = self.replay.paths.dir
        async for changes in awatch(folder, debounce=40, step=5):
            names = {Path(path) for _, path in changes}
            if any("receipts" in p.parts[len(folder.parts) :] for p in names):
                self._receipts_changed = True
            if not self.following:
                return
            self.request_advance()
            if self.replay.paths.events in names:
                self.request_verify()

    def request_verify(self) -> None:
        """Prove that no byte already read changed (requests coalesce)."""
        self._verify_dirty = True
        if not self._verify_running:
            self._verify_running = True
            self.verify_worker(self.replay)

    @work(thread=True, group="verify", exit_on_error=False)
    def verify_worker(self, replay: Replay) -> None:
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
                    self.post_message(Rewritten(replay, str(found)))
                    return
                time.sleep(max(VERIFY_GAP, time.perf_counter() - started))
        except (OSError, ValueError):
            pass  # the file went away or was closed by a reload: the reader says so
        finally:
            self.post_message(VerifyDone(replay))

    @work(exclusive=True, group="watch-rules")
    async def watch_rules_file(self) -> None:
        path = self.rules_path()
        if path is None:
            return
        async for changes in awatch(path.parent, debounce=80, step=10, recursive=False):
            if any(Path(p).name == path.name for _, p in changes):
                self.reload_rules()

    def rules_path(self) -> Path | None:
        spec = self.reducer_spec or ""
        target = spec.rpartition(":")[0]
        return Path(target).resolve() if target.endswith(".py") else None

    @work(thread=True, exclusive=True, group="rules", exit_on_error=False)
    def reload_rules(self) -> None:
        """Load the rules again and re-evaluate every prefix with them."""
        old = self.replay
        try:
            rules = load_reducer(self.reducer_spec)
            new = reopen(old, rules=rules)  # the app's clock watches these rules too
            new.advance(cancelled=lambda: get_current_worker().is_cancelled)
            if not new.following:
                new.finish()
            difference = first_difference(old, new)
        except CannotRun as exc:
            self.post_message(RulesFailed(str(exc)))
            return
        except Exception as exc:  # the new rules are broken: keep the last good ones
            self.post_message(RulesFailed(f"{type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(RulesReloaded(new, difference))

    @work(thread=True, exclusive=True, group="view", exit_on_error=False)
    def load_view(self, index: int) -> None:
        """Replay to the selected line (from the nearest checkpoint)."""
        view = self.view.line_view(index)
        if not get_current_worker().is_cancelled:
            self.post_message(ViewReady(index, view))

    @work(thread=True, exclusive=True, group="turns", exit_on_error=False)
    def find_turns(self, condition: Condition, after: int, direction: int) -> None:
        """Every seq where ``condition`` turns true; the first one past
        ``after`` (before it, for -1) is posted as soon as it is known."""
        worker = get_current_worker()
        replay = self.replay
        until = replay.valid
        started = time.perf_counter()
        seqs: list[int] = []
        posted = False
        turns = iter_turns(replay, condition, until, _Cancelled(worker))
        for turn in turns:
            seqs.append(turn.seq)
            if not posted and direction > 0 and turn.seq > after:
                posted = True
                self.post_message(TurnFound(condition, turn.seq, wrapped=False))
        if worker.is_cancelled:
            return
        if not posted and seqs:
            before = [s for s in seqs if s < after] if direction < 0 else []
            seq = before[-1] if before else (seqs[-1] if direction < 0 else seqs[0])
            self.post_message(TurnFound(condition, seq, wrapped=not before))
        self.post_message(TurnsReady(condition, seqs, until, time.perf_counter() - started))

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def scan_watch(self, path: StatePath, start: int = 0) -> None:
        """Every seq after ``start`` where the value at ``path`` changed,
        posted in batches (from a later ``start``: a run that grew)."""
        worker = get_current_worker()
        replay = self.replay
        until = replay.valid
        started = last = time.perf_counter()
        batch: list[PathChange] = []
        if start and replay.history is not None:
            found = PathScan(replay.history, path, start).advance(until, _Cancelled(worker))
        else:
            found = iter_path_changes(replay, path, until, _Cancelled(worker))
        for change in found:
            batch.append(change)
            now = time.perf_counter()
            if now - last > 0.1:
                self.post_message(WatchFound(path, batch, False, until, now - started))
                batch, last = [], now
        if not worker.is_cancelled:
            done = time.perf_counter() - started
            self.post_message(WatchFound(path, batch, True, until, done))

    @work(thread=True, exclusive=True, group="advance-b", exit_on_error=False)
    def advance_b(self, b: Replay) -> None:
        """Replay B strictly (compare mode), beside A's own worker."""
        worker = get_current_worker()
        try:
            b.advance(cancelled=lambda: worker.is_cancelled)
            if not worker.is_cancelled:
                b.finish()
        except Exception as exc:  # B unreadable: say so, A stays
            self.post_message(OtherSideDone(b, f"B could not be replayed: {exc}"))
            return
        if not worker.is_cancelled:
            self.post_message(OtherSideDone(b, ""))

    @work(thread=True, exclusive=True, group="differences", exit_on_error=False)
    def find_differences(self, a: Replay, b: Replay) -> None:
        """Where A and B part, row by row (events, then what they changed)."""
        worker = get_current_worker()
        found = row_differences(
            a, b, strict=self.compare.strict, cancelled=lambda: worker.is_cancelled
        )
        if not worker.is_cancelled:
            self.post_message(Differences(b, found))

    @work(thread=True, exclusive=True, group="bookmarks-load", exit_on_error=False)
    def load_bookmarks(self) -> None:
        """The person's bookmarks of this ledger (hashing its recorded prefix)."""
        ledger = self.replay.paths.events
        self.post_message(BookmarksLoaded(ledger, Bookmarks.load(ledger)))

    @work(thread=True, group="bookmarks-save", exit_on_error=False)
    def save_bookmarks(self, bookmarks: Bookmarks) -> None:
        """Write them to the state directory (never the run folder)."""
        try:
            bookmarks.save()
        except OSError as exc:
            self.post_message(BookmarksFailed(f"bookmarks not saved: {exc}"))

    @work(thread=True, exclusive=True, group="report", exit_on_error=False)
    def report_worker(self, seqs: list[int], notes: dict[int, str], folder: Path) -> None:
        """Write the report (it reads the whole ledger for its sha256)."""
        try:
            path = write_report(self.replay, seqs, notes, html=False, folder=folder)
        except (CannotRun, OSError) as exc:
            self.post_message(ReportDone(None, str(exc)))
            return
        self.post_message(ReportDone(path, ""))

    @work(thread=True, exclusive=True, group="filter", exit_on_error=False)
    def run_filter(self, query: str) -> None:
        worker = get_current_worker()
        found = self.view.matches(query, cancelled=lambda: worker.is_cancelled)
        if found is not None and not worker.is_cancelled:
            self.post_message(FilterReady(query, found))

    # -- messages up --------------------------------------------------------
    def _widgets_gone(self) -> bool:
        """True once the widgets are gone (messages still arrive while exiting)."""
        return not self.query(Timeline)

    def _stale(self, replay: Replay) -> bool:
        """A message about a replay no longer shown (or the app is closing)."""
        return replay is not self.replay or self._widgets_gone()

    def on_progress(self, message: Progress) -> None:
        if self._stale(message.replay):
            return
        self._fraction = message.fraction
        self._rows_grew()
        self._reach_pending_seq()

    def _rows_grew(self) -> None:
        self.timeline.rows_changed()
        cursor = self.timeline.cursor
        ride = self.tail.rows_grew(
            cursor=cursor, following=self.following, rows=self.view.row_count()
        )
        if ride and self.timeline.row_count:
            last = self.timeline.row_count - 1
            self.tail.will_move(last, self.timeline.index_at(last), cursor)
            self.timeline.move_to(last)
            if last == cursor:  # no move, so no new view: the row itself may have changed
                self._refresh_waiting_view()
        elif self._line_view is None and self.view.row_count():
            self.timeline.move_to(self.timeline.cursor, force=True)
        else:
            self._refresh_waiting_view()
        self.refresh_status()

    def _refresh_waiting_view(self) -> None:
        """A row shown as waiting (not validated yet, or its receipt pending)
        may have moved on: show it again (a receipt arriving, say)."""
        view = self._line_view
        if view is not None and view.mode in ("pending", "receipt") and not self.at_initial:
            self.show_view(view.index)

    def on_advanced(self, message: Advanced) -> None:
        if self._stale(message.replay):
            return
        if self.replay.pending is not None:
            # a receipt may be half-written: look again even if no event comes
            self.set_timer(FRESH_SECONDS + 0.5, self._recheck_receipts)
        self.validating = False
        self.failed = self.replay.error is not None
        if self.replay.finished and self.following:
            self.following = self.live = False
        self._rows_grew()
        self._after_rewrite()
        self._maybe_find_differences()
        watched = self.watched
        if (
            watched is not None
            and self._watch_done
            and self.replay.valid > self._watch_until
            and self.replay.history is not None
        ):
            self._watch_done = False  # on from where it stopped: the run grew
            self.scan_watch(watched, self._watch_until)
        self._reach_pending_seq()
        err_index = self.view.error_index()
        if err_index is not None and not self._jumped_to_error:
            self._jumped_to_error = True
            self.tail.riding = False
            if self._person_moved and self.timeline.cursor_index != err_index:
                self._error_waiting = err_index  # the status says where; e goes there
            else:
                self.timeline.move_to_index(err_index)
        self.refresh_status()

    def _reach_pending_seq(self) -> None:
        """Go to the seq a link or ``:`` asked for as soon as validation has
        reached it (not when the whole run is validated)."""
        seq = self._pending_seq
        r = self.replay
        if seq is None or not (r.valid >= seq or r.finished or r.error is not None):
            return
        self._pending_seq = None
        self._person_moved = True  # a link is the person's choice: errors wait
        self.call_after_refresh(self._open_at, seq)  # after the first row's own move

    def _person_moves(self) -> None:
        """The person moved the cursor: theirs now. Validation does not pull
        it, and a jump still waiting for validation is forgotten."""
        self._person_moved = True
        self._pending_seq = None

    def _open_at(self, seq: int) -> None:
        """Go to the seq a link named: the last event if it is past the end."""
        last = self.view.row(self.view.row_count() - 1).seq if self.view.row_count() else 0
        if last is not None and seq > last:
            self.notify(
                f"seq {seq} is past the end of this run ({last} events): at the last one",
                severity="warning",
                timeout=6,
            )
            seq = last
        self._go_to_seq(seq)
        self._person_moved = True

    def _recheck_receipts(self) -> None:
        if self.following and self.replay.pending is not None:
            self._receipts_changed = True
            self.request_advance()

    def on_verify_done(self, message: VerifyDone) -> None:
        self._verify_running = False
        if self._verify_dirty and self.following and not self._widgets_gone():
            self.request_verify()

    def on_advance_done(self, message: AdvanceDone) -> None:
        if self._stale(message.replay):
            return
        self._advance_running = False
        if self._dirty:
            self.request_advance()

    def on_rewritten(self, message: Rewritten) -> None:
        if self._stale(message.replay):
            return
        # where the person was: kept if the new history still has it (and
        # through a second rewrite while the first is read again)
        if self._rewrite_place is None:
            self._rewrite_place = (None if self.riding else self._cursor_seq(),)
        self.banner = f"history changed: {message.why}; reading it again from the start"
        self.rewrite_note = message.why
        fresh = reopen(self.replay, following=self.following)
        self.set_replay(fresh)
        self.refresh_status()

    def _after_rewrite(self) -> None:
        """The new history is read: the banner goes (a notice says what
        happened), and the person is back where they were, or riding."""
        if self._rewrite_place is None:
            return
        (place,), self._rewrite_place = self._rewrite_place, None
        self.banner = ""
        r = self.replay
        verdict = f"{r.valid:,} valid events"
        if r.error is not None:
            verdict += f", then {r.error.code} at line {r.error.line}"
        self.notify(
            f"history changed ({self.rewrite_note}): read again, {verdict}",
            severity="warning",
            timeout=10,
            markup=False,
        )
        if place is None:
            self.action_last()  # riding, as before
            return
        self._open_at(place)
        self.tail.leave(self.view.row_count())

    def on_advance_failed(self, message: AdvanceFailed) -> None:
        if self._stale(message.replay):
            return
        self.banner = message.why
        self.notify(message.why, severity="error", timeout=10, markup=False)
        self.refresh_status()

    def on_rules_reloaded(self, message: RulesReloaded) -> None:
        if self._widgets_gone():
            return
        self.set_replay(message.replay)
        sha = message.replay.rules.rules_sha256[:12]
        if message.difference is None:
            self.rules_note = f"rules {sha}: same states and verdict as before"
            self.view.difference_index = None
        else:
            self.rules_note = f"rules {sha}: first difference at seq {message.difference}"
            self.view.difference_index = message.difference - 1
        self.timeline.rows_changed()
        self.refresh_status()

    def on_rules_failed(self, message: RulesFailed) -> None:
        if self._widgets_gone():
            return
        self.rules_note = "rules failed to load; keeping the last good rules"
        self.notify(
            message.why, title="rules failed to load", severity="error", timeout=10, markup=False
        )
        self.refresh_status()

    def set_replay(self, replay: Replay) -> None:
        """Show another replay of the same run (reloaded, or new rules), keeping the cursor."""
        old = self.replay
        cursor = self.timeline.cursor_index or 0
        self.workers.cancel_group(self, "advance")
        self.replay = replay
        self.view = RunView(replay)
        self.timeline.source = self.view
        self._line_view = None
        self._advance_running = False
        self._jumped_to_error = False
        self._error_waiting = None
        self.validating = True
        self.search.clear_filter()
        self.timeline.show_only(None)
        self.request_advance()
        self.timeline.move_to(cursor, force=True)
        if old is not replay:
            old.close()

    @on(Timeline.CursorMoved)
    def _cursor_moved(self, message: Timeline.CursorMoved) -> None:
        if self._widgets_gone():
            return
        if self.at_initial:
            if message.index == self._initial_move:  # the move to row 0 that showed it
                self._initial_move = None
                return
            self._leave_initial()
        if self.timeline.clicked:
            self.timeline.clicked = False
            self._person_moves()
        if message.index == self._error_waiting:
            self._error_waiting = None
        self.tail.moved(
            message.index,
            at_tail=self.timeline.cursor >= self.timeline.row_count - 1,
            following=self.following,
            rows=self.view.row_count(),
            cursor=self.timeline.cursor,
        )
        self.show_view(message.index)
        if self.watched is not None:
            self.query_one(WatchPane).select_seq(self._cursor_seq())
        self.refresh_status()

    def show_view(self, index: int) -> None:
        """The side panes for line ``index``: in this very frame when the
        engine can answer at once (built-in rules over the state store: a
        step costs what the event changed), else from a worker."""
        if index >= self.view.row_count():
            return  # a reloaded ledger not indexed yet: shown when its rows come
        if self.replay.history is None or self.replay.guarded or self._slow_views:
            self.load_view(index)
            return
        self.workers.cancel_group(self, "view")  # a worker's older answer is stale
        started = time.perf_counter()
        view = self.view.line_view(index)
        # a machine this slow is better served off the UI thread
        self._slow_views = time.perf_counter() - started > INLINE_VIEW_SECONDS
        self._line_view = view
        self.render_panes()

    def on_view_ready(self, message: ViewReady) -> None:
        if self._widgets_gone():
            return
        if message.index != self.timeline.cursor_index:
            return  # the cursor moved on; a newer view is on its way
        self._line_view = message.view
        self.render_panes()
        self.refresh_status()

    def on_filter_ready(self, message: FilterReady) -> None:
        if self._widgets_gone():
            return
        if message.query != self.search.filter_text:
            return
        self.search.matches = message.found
        self.timeline.show_only(message.found)
        self.refresh_status()
        if not len(message.found):
            self._line_view = None
            self.render_panes()
            self.notify(f"no rows match {message.query!r}", severity="warning", markup=False)

    def on_other_side_done(self, message: OtherSideDone) -> None:
        if self._widgets_gone() or message.b is not self.compare.b:
            return
        if message.why:
            self.notify(message.why, severity="error", timeout=10, markup=False)
        self.compare.replayed()
        self._maybe_find_differences()
        self.render_panes()
        self.refresh_status()

    def _maybe_find_differences(self) -> None:
        b = self.compare.b
        if b is not None and self.compare.wants_differences(self.replay):
            self.find_differences(self.replay, b)

    def on_differences(self, message: Differences) -> None:
        if self._widgets_gone() or message.b is not self.compare.b:
            return
        self.compare.differs = message.indexes
        self.timeline.set_differs(frozenset(message.indexes))
        self.refresh_status()

    def action_difference(self, direction: int) -> None:
        if self.compare.b is None:
            self.notify("not comparing: s compares with this event left out", timeout=3)
            return
        if self.compare.differs is None:
            self.notify("still comparing…", timeout=2)
            return
        found = self.compare.next_difference(self.timeline.cursor_index or 0, direction)
        if found is None:
            self.notify("no more differences that way", timeout=2)
            return
        self._person_moves()
        self.timeline.move_to_index(found)

    def action_skip_event(self) -> None:
        """``s``: what if this event had not happened? Compare the run with the
        branch that leaves it out (and, in that view, the others skipped)."""
        index = self.timeline.cursor_index
        seq = self.view.row(index).seq if index is not None and not self.at_initial else None
        if seq is None or seq > self.replay.valid:
            self.notify("s leaves out an event the run replayed: not this row", timeout=3)
            return
        if self.following:
            self.notify(f"{COMPARE_FINISHED}: F stops following first", timeout=4)
            return
        b = self.compare.b
        if b is not None and not b.skip:
            self.notify("already comparing with another run: Esc first", timeout=3)
            return
        skip = {seq, *(b.skip if b is not None else ())}
        self.open_compare(reopen(self.replay, following=False, skip=skip))

    def open_compare(self, b: Replay) -> None:
        """Compare mode with B (closing any B before it)."""
        self.close_compare()
        self.compare.start(b)
        self.advance_b(b)
        self.render_panes()
        self.refresh_status()

    def close_compare(self) -> None:
        if self.compare.b is None:
            return
        self.workers.cancel_group(self, "advance-b")
        self.workers.cancel_group(self, "differences")
        old = self.compare.stop()
        self.timeline.set_differs(frozenset())
        if old is not None:
            old.close()
        self.render_panes()
        self.refresh_status()

    def on_bookmarks_loaded(self, message: BookmarksLoaded) -> None:
        if self._widgets_gone() or message.ledger != self.replay.paths.events:
            return
        for said in self.marks.loaded(message.bookmarks):
            self.notify(said, severity="warning", timeout=8, markup=False)
        self._show_bookmarks()

    def on_bookmarks_failed(self, message: BookmarksFailed) -> None:
        if not self._widgets_gone():
            self.notify(message.why, severity="error", timeout=8, markup=False)

    def _show_bookmarks(self) -> None:
        self.timeline.set_bookmarks(self.marks.rows())
        self.refresh_status()

    def _bookmark_target(self) -> tuple[int, Bookmarks] | None:
        """The seq the cursor is on and the bookmarks, if they are loaded
        and it has one."""
        bookmarks = self.marks.bookmarks
        if bookmarks is None:
            self.notify("bookmarks are still loading", timeout=2)
            return None
        index = self.timeline.cursor_index
        seq = self.view.row(index).seq if index is not None and not self.at_initial else None
        if seq is None:
            self.notify("no event here to bookmark", severity="warning", timeout=3)
            return None
        return seq, bookmarks

    def action_bookmark(self) -> None:
        target = self._bookmark_target()
        if target is None:
            return
        said = self.marks.toggle(target[0])
        self.save_bookmarks(target[1])
        self._show_bookmarks()
        self.notify(said, timeout=2)

    def action_annotate(self) -> None:
        target = self._bookmark_target()
        if target is None:
            return
        seq, bookmarks = target

        def done(note: str | None) -> None:
            if note is None:
                return
            bookmarks.annotate(seq, note)
            self.save_bookmarks(bookmarks)
            self._show_bookmarks()

        self._prompt(NoteScreen(seq, self.marks.note(seq)), done)

    def action_next_bookmark(self) -> None:
        found = self.marks.next_after(self._cursor_seq())
        if found is None:
            self.notify("no bookmarks: b bookmarks the event at the cursor", timeout=3)
            return
        seq, wrapped = found
        if wrapped:
            self.notify(f"wrapped to the first bookmark: seq {seq}", timeout=2)
        self._go_to_seq(seq)

    def action_write_report(self) -> None:
        """``X``: the bookmarks (with their notes) and the cursor's seq, as a
        Markdown report in the current folder; never in the run folder (then
        in the state directory, and the path says so)."""
        seqs, notes = self.marks.for_report(self._cursor_seq())
        folder = Path.cwd()
        try:
            refuse_inside_run(self.replay.paths, folder)
        except CannotRun:
            folder = state_dir() / "reports"
            folder.mkdir(parents=True, exist_ok=True)
        self.notify(f"writing the report of seq {', '.join(map(str, seqs))}…", timeout=2)
        self.report_worker(seqs, notes, folder)

    def on_report_done(self, message: ReportDone) -> None:
        if self._widgets_gone():
            return
        if message.path is None:
            self.notify(f"report not written: {message.why}", severity="error", markup=False)
            return
        self.notify(f"wrote {message.path}", timeout=8, markup=False)

    def action_copy_link(self) -> None:
        link = self.link()
        self.app.copy_to_clipboard(link)
        self.notify(
            f"copied the link {link} (replay-tui {link} opens this seq)", timeout=4, markup=False
        )

    def link(self) -> str:
        """``RUN@SEQ`` for the cursor: ``replay-tui RUN@SEQ`` opens it there."""
        paths = self.replay.paths
        run = paths.dir if paths.format == "jsonl" and not paths.compressed else paths.events
        return f"{run}@{self._cursor_seq()}"

    def on_turn_found(self, message: TurnFound) -> None:
        if self._widgets_gone() or message.condition is not self.search.condition:
            return
        if message.wrapped:
            self.notify(
                f"wrapped: {message.condition.text} turns true at seq {message.seq}",
                timeout=3,
                markup=False,
            )
        self._go_to_seq(message.seq)

    def on_turns_ready(self, message: TurnsReady) -> None:
        if self._widgets_gone() or message.condition is not self.search.condition:
            return
        self.search.answered(message.seqs, message.until)
        if not message.seqs:
            self.notify(
                f"never: {message.condition.text} holds after none of prefixes "
                f"0..{message.until} (searched in {message.seconds:.2f} s)",
                severity="warning",
                timeout=6,
                markup=False,
            )
        self.refresh_status()

    def on_watch_found(self, message: WatchFound) -> None:
        if self._widgets_gone() or message.path != self.watched:
            return
        self.watch_changes.extend(message.changes)
        self._watch_done = message.done
        if message.done:
            self._watch_until = message.until
        self._show_watch(message.until, message.seconds)
        self.query_one(WatchPane).select_seq(self._cursor_seq())
        indexes = frozenset(c.seq - 1 for c in self.watch_changes)
        self.timeline.set_marks(indexes)
        self.refresh_status()

    def _show_watch(self, until: int, seconds: float) -> None:
        pane = self.query_one(WatchPane)
        assert self.watched is not None
        count = len(self.watch_changes)
        where = format_path(self.watched)
        if self._watch_done:
            pane.border_title = f"watch {escape_controls(where)} · {count:,} changes"
            note = f"{where} never changed in events 1..{until}"
        else:
            pane.border_title = f"watch {escape_controls(where)} · {count:,} so far…"
            note = "searching…"
        pane.border_subtitle = "Enter: go there · Esc: stop"
        pane.reveal = self.reveal
        pane.set_changes(self.watch_changes, escape_controls(note))

    @on(StatePane.Watch)
    def _watch_path(self, message: StatePane.Watch) -> None:
        if message.path is None:
            self.notify(
                "put the state pane's cursor on a value or a change line to watch it",
                severity="warning",
                timeout=4,
            )
            return
        self.start_watch(message.path)

    def start_watch(self, path: StatePath) -> None:
        """Watch the value at ``path``: the seqs where it changed, listed and
        marked in the timeline's gutter."""
        self.watched = path
        self.watch_changes = []
        self._watch_done = False
        self._watch_until = 0
        self.watching = True
        pane = self.query_one(WatchPane)
        pane.kind_of = self._kind_of
        replay = self.replay
        pane.resolve = lambda value: resolve(replay, path, value, frozen=True)
        pane.cursor = 0
        self._show_watch(self.replay.valid, 0.0)
        self.timeline.set_marks(frozenset())
        self.scan_watch(path)
        pane.focus()  # Enter goes to a change; j / k still step
        self.refresh_status()

    def stop_watch(self) -> None:
        self.workers.cancel_group(self, "watch")
        self.watched = None
        self.watch_changes = []
        self.watching = False
        self.timeline.set_marks(frozenset())
        if self.focused is self.query_one(WatchPane):
            self.timeline.focus()
        self.refresh_status()

    def _kind_of(self, seq: int) -> str:
        index = seq - 1
        if 0 <= index < self.view.row_count():
            return self.view.row(index).kind or ""
        return ""

    @on(WatchPane.Jump)
    def _watch_jump(self, message: WatchPane.Jump) -> None:
        self._person_moves()
        self._go_to_seq(message.seq)

    def _go_to_seq(self, seq: int) -> None:
        """Put the cursor on ``seq`` (0: the initial state), through a filter
        that hides it (cleared, with a word)."""
        self._person_moved = True
        if seq == 0:
            self._enter_initial()
            return
        index = self._index_of_seq(seq)
        if index < 0:
            self.notify(f"seq {seq} is not in the timeline", severity="warning")
            return
        if not self.timeline.move_to_index(index) and self.search.filter_text:
            self.notify(f"seq {seq} was hidden by the filter: cleared it", timeout=3)
            self.apply_filter("")
            self.timeline.move_to_index(index)

    def _cursor_seq(self) -> int:
        """The prefix the cursor shows: 0 at the initial state."""
        if self.at_initial:
            return 0
        index = self.timeline.cursor_index
        if index is None:
            return 0
        seq = self.view.row(index).seq
        return seq if seq is not None else self.replay.valid

    # -- drawing ------------------------------------------------------------
    def render_panes(self) -> None:
        view = self._line_view
        pending = f"validating… {self._fraction:.0%}" if self.validating else ""
        if self.search.nothing_matches():
            pending = f"no rows match {self.search.filter_text!r} (Esc clears the filter)"
        self.query_one(StatePane).show(
            view,
            full=self.full_state,
            reveal=self.reveal,
            expand=self.expand,
            pending_note=pending,
            compare=self.compare.lines(self.replay, self._cursor_seq(), reveal=self.reveal),
        )
        self.query_one(ReceiptPane).show(view, reveal=self.reveal, expand=self.expand)
        initial = view is not None and view.mode == "initial"
        title = "full state" if self.full_state or initial else "state diff"
        self.query_one("#state").border_title = title

    def status_text(self) -> Text:
        """The status line: verdict, compare mode, position, notes, questions
        (each piece its own method), after the run's names."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("  ")
        self._status_verdict(text)
        self.compare.status(text)
        total = self.view.row_count()
        timelines = self.query(Timeline)
        index = timelines.first().cursor_index if total and timelines else None
        self._status_position(text, index, total)
        self._status_notes(text, index)
        self._status_questions(text)
        return self._with_names(text)

    def _status_verdict(self, text: Text) -> None:
        """``● LIVE`` and the verdict so far."""
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
            text.append(f" ✗ error at {where}: {r.error.code} ", style="bold white on #a03030")
            if self._error_waiting is not None:
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
                text.append(" ✓ valid so far ", style="bold black on #a6d189")
        elif self.validating:
            text.append(f" validating {self._fraction:.0%} ", style="bold black on #e5c890")
        else:
            text.append(" ✓ verified ", style="bold black on #a6d189")

    def _status_position(self, text: Text, index: int | None, total: int) -> None:
        """Where the cursor is, and the state's word there."""
        view = self._line_view
        if index is not None and self.at_initial and view is not None:
            text.append(f"  initial state, prefix 0 of {total}  state ")
            text.append(escape_controls(view.summary or ""), style="bold #a6d189")
        elif index is not None:
            row = self.view.row(index)
            if row.seq is not None:
                text.append(f"  seq {row.seq} of {total}")
            else:  # a line with no usable seq: say where it is
                text.append(f"  line {index + 1} of {total}")
            if view is not None and view.index == index and view.summary:
                if view.mode == "step":
                    text.append("  state ")
                    text.append(escape_controls(view.summary), style="bold #a6d189")
                    for warning in view.warnings:
                        said = clip(f"{warning.code}: {warning.message}", 60)
                        text.append(f"  ⚠ {escape_controls(said)}", style="bold #e5c890")
                elif view.mode == "failed":
                    text.append("  state before it ")
                    text.append(escape_controls(view.summary), style="bold #e5c890")

    def _status_notes(self, text: Text, index: int | None) -> None:
        """New rows while following, rules notes, the filter, a bookmark."""
        if self.following:
            new_rows = self.tail.unseen(self.view.row_count())
            if new_rows > 0:
                text.append(
                    f"  +{new_rows} new events (End returns to the tail)", style="bold #81c8be"
                )
        if self.rules_note:
            text.append(f"  {escape_controls(self.rules_note)}", style="#ca9ee6")
        if self.stuck_note:
            text.append(f"  ⏳ {self.stuck_note}", style="bold #ef9f76")
        self.search.filter_status(text)
        here = self.view.row(index).seq if index is not None and not self.at_initial else None
        self.marks.status(text, here)

    def _status_questions(self, text: Text) -> None:
        """The condition, the watch, playback and revealed secrets."""
        self.search.condition_status(text, self._cursor_seq())
        if self.watched is not None:
            shown = f"{len(self.watch_changes):,}" + ("" if self._watch_done else "…")
            text.append(
                f"  watching {escape_controls(format_path(self.watched))}: {shown} changes",
                style="#ef9f76",
            )
        if self.playing:
            text.append(f"  ▶ playing ×{self.speed:g}", style="bold #81c8be")
        if self.reveal:
            text.append("  secrets shown", style="bold #e78284")

    def _with_names(self, rest: Text) -> Text:
        """The run's label first, then its run_id and rules while they fit:
        the verdict, the position and the state's word matter more. A long
        run_id (a Temporal run's UUID) is cut before the rules go; the rules
        go before the run_id, which names the run in a ticket."""
        r = self.replay
        head = Text(" ")
        head.append(escape_controls(self.label), style="bold")
        room = self.size.width - head.cell_len - rest.cell_len
        rules = f"  rules {r.reducer.name} {r.reducer.version}"
        run = escape_controls(r.run_id) if r.run_id else ""
        extras = ""
        for with_rules in (True, False):
            left = room - (len(rules) if with_rules else 0) - len("  run ")
            if not run or cell_len(run) <= left:
                extras = (f"  run {run}" if run else "") + (rules if with_rules else "")
            elif left >= MIN_RUN_ID:
                extras = f"  run {run[: left - 1]}…" + (rules if with_rules else "")
            else:
                continue
            if cell_len(extras) <= room:
                break
            extras = ""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(head)
        text.append(extras, style="dim")
        text.append_text(rest)
        if self.banner:  # on a line of its own: it must be read whole
            text.append("\n ")
            text.append(escape_controls(self.banner), style="bold #e78284")
        return text

    def refresh_status(self) -> None:
        found = self.query("#status")
        if found:  # messages still arrive while the app exits
            found.first(Static).update(self.status_text())

    def on_resize(self) -> None:
        if not self._widgets_gone():
            self.call_after_refresh(self.refresh_status)  # with the new width laid out

    def watch_full_state(self) -> None:
        self.render_panes()

    def watch_reveal(self) -> None:
        self.render_panes()
        self.refresh_status()
        if self.watched is not None:
            pane = self.query_one(WatchPane)
            pane.reveal = self.reveal
            pane.refresh()

    def watch_expand(self) -> None:
        self.render_panes()

    # -- actions ------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        self._person_moves()
        if self.at_initial and delta > 0:  # from prefix 0 to event 1
            self._leave_initial()
            self.show_view(self.timeline.index_at(0))
            self.refresh_status()
            return
        if delta < 0 and self.timeline.cursor == 0 and not self.at_initial:
            self._enter_initial()
            return
        self.timeline.move_to(self.timeline.cursor + delta)

    def _enter_initial(self) -> None:
        """Show prefix 0: the state the rules start from, every event to come."""
        if not self.view.row_count():
            return
        self.at_initial = True
        self.timeline.before_first = True
        self.timeline.border_title = "timeline · prefix 0: no event yet"
        if self.timeline.cursor != 0:
            self._initial_move = self.timeline.index_at(0)
            self.timeline.move_to(0)
        self.timeline.rows_changed()
        self.workers.cancel_group(self, "view")
        self._line_view = self.view.initial_view()
        self.render_panes()
        self.refresh_status()

    def _leave_initial(self) -> None:
        self.at_initial = False
        self._initial_move = None
        self.timeline.before_first = False
        self.timeline.border_title = "timeline"
        self.timeline.rows_changed()

    def action_page(self, direction: int) -> None:
        self._person_moves()
        self.timeline.move_to(self.timeline.cursor + direction * self.timeline.page_rows)

    def action_first(self) -> None:
        self._person_moves()
        if self.at_initial:  # event 1, from prefix 0
            self.action_step(1)
            return
        self.timeline.move_to(0)

    def action_last(self) -> None:
        self._person_moves()
        self.tail.riding = True
        self.timeline.move_to(self.timeline.row_count - 1)
        self.tail.ride(self.timeline.cursor)
        self.refresh_status()

    def action_follow(self) -> None:
        """Start following the ledger (or return to its tail)."""
        if not self.following:
            refused = why_not_follow(self.replay.paths)
            if refused is None and self.compare.b is not None:
                refused = f"{COMPARE_FINISHED}: Esc leaves compare mode, then f follows"
            if refused is not None:
                self.notify(f"not following: {refused}", severity="warning", timeout=5)
                return
            self.following = self.live = True
            self._stop_following = False
            self.tail = TailRider()
            self.set_replay(reopen(self.replay, following=True))
            self.watch_run()
            self.notify("following the ledger: new events appear as they are written", timeout=3)
        self.action_last()

    def action_unfollow(self) -> None:
        """Stop following: judge the ledger as complete, strictly."""
        if not self.following:
            self.notify("not following this ledger (f follows it as it grows)", timeout=3)
            return
        self.following = self.live = False
        self._stop_following = True
        self.workers.cancel_group(self, "watch-run")
        self.request_advance()
        self.refresh_status()

    def action_reload_rules(self) -> None:
        if self.rules_path() is None:
            self.notify("rules reload needs --reducer path/to/rules.py:NAME", severity="warning")
            return
        self.reload_rules()

    def action_goto(self) -> None:
        def done(answer: int | Condition | None) -> None:
            if answer is None:
                return
            self._person_moves()
            if isinstance(answer, Condition):
                self.search_condition(answer)
                return
            r = self.replay
            if answer > r.valid and not r.finished and r.error is None:
                self._pending_seq = answer  # validation has not reached it yet
                self.notify(
                    f"validated up to seq {r.valid:,}: going to seq {answer:,} when it is reached",
                    timeout=4,
                )
                return
            self._open_at(answer)

        self._prompt(GotoScreen(self._goto_range), done)

    def _goto_range(self) -> str:
        """The seqs ``:`` can go to now (the prompt shows it, kept current)."""
        r = self.replay
        if r.finished or r.error is not None:
            return f"1..{r.valid:,}" if r.error is None else f"1..{self.view.row_count():,}"
        return f"1..{r.valid:,} validated so far"

    def search_condition(self, condition: Condition, direction: int = 1) -> None:
        """Go to the next seq past the cursor where ``condition`` turns true
        (the scan runs in a worker; n / N then step through its answers)."""
        self.search.ask(condition)
        self.find_turns(condition, self._cursor_seq(), direction)
        self.refresh_status()

    def _index_of_seq(self, seq: int) -> int:
        """Line index of ``seq``: line seq-1 in a valid ledger, else searched nearby."""
        guess = seq - 1
        if 0 <= guess < self.view.row_count() and self.view.row(guess).seq == seq:
            return guess
        for index in range(min(self.view.row_count(), max(0, guess + 64)) - 1, -1, -1):
            if self.view.row(index).seq == seq:
                return index
        return -1

    def action_problem(self, direction: int) -> None:
        self._person_moves()
        if direction > 0 and self._error_waiting is not None:
            self.timeline.move_to_index(self._error_waiting)  # the error they were told of
            return
        problems = self.view.problem_indexes()
        current = self.timeline.cursor_index or 0
        ahead = [i for i in problems if (i > current if direction > 0 else i < current)]
        if not ahead:
            self.notify("no more errors or warnings that way", severity="information")
            return
        self.timeline.move_to_index(ahead[0] if direction > 0 else ahead[-1])

    def action_filter(self) -> None:
        def done(query: str | None) -> None:
            if query is None:
                return
            self.apply_filter(query)

        self._prompt(FilterScreen(self.search.filter_text), done)

    def apply_filter(self, query: str) -> None:
        query = self.search.set_filter(query)
        if query:
            self.run_filter(query)
        else:
            self.timeline.show_only(None)
        self.refresh_status()

    def action_clear_filter(self) -> None:
        if self.search.filter_text:
            self.apply_filter("")

    def action_escape(self) -> None:
        """Esc: stop watching; else leave compare mode; else forget the
        condition, the filter and a jump still waiting for validation."""
        if self.watched is not None:
            self.stop_watch()
            return
        if self.compare.b is not None:
            self.close_compare()
            return
        if self.search.forget():
            self.workers.cancel_group(self, "turns")
            self.refresh_status()
        if self._pending_seq is not None:
            self.notify(f"no longer going to seq {self._pending_seq:,}", timeout=2)
            self._pending_seq = None
        self.action_clear_filter()

    def action_match(self, direction: int) -> None:
        if self.search.condition is not None:
            self._next_turn(direction)
            return
        if not self.search.filter_text or self.search.matches is None:
            self.notify(
                "nothing to repeat: : takes a condition, / a filter", severity="information"
            )
            return
        self.action_step(direction)

    def _next_turn(self, direction: int) -> None:
        condition = self.search.condition
        assert condition is not None
        if self.search.turn_seqs is None:
            self.notify("still searching…", timeout=2)
            return
        if self.search.stale(self.replay.valid):  # the run grew: search it all again
            self.search_condition(condition, direction)
            return
        turn = self.search.next_turn(self._cursor_seq(), direction)
        if turn is None:
            self.notify(f"never: {condition.text}", severity="warning", markup=False)
            return
        if turn.wrapped:
            end = "start" if direction > 0 else "end"
            self.notify(f"wrapped to the {end}: seq {turn.seq}", timeout=2)
        self._go_to_seq(turn.seq)
        self.refresh_status()

    def action_play(self) -> None:
        self.playing = not self.playing
        if self.playing:
            if self.timeline.cursor >= self.timeline.row_count - 1:
                self.timeline.move_to(0)
            self._schedule_play()
        elif self._play_timer is not None:
            self._play_timer.stop()
        self.refresh_status()

    def _schedule_play(self) -> None:
        delay = 1.0 / FIXED_PACE
        index = self.timeline.cursor_index
        if index is not None and self.timeline.cursor + 1 < self.timeline.row_count:
            now = self.view.row(index).ts
            nxt = self.view.row(self.timeline.index_at(self.timeline.cursor + 1)).ts
            if now is not None and nxt is not None:
                delay = nxt - now  # the recorded pace
        delay = min(max(delay / self.speed, 0.02), 5.0)
        self._play_timer = self.set_timer(delay, self._play_tick)

    def _play_tick(self) -> None:
        if not self.playing:
            return
        tl = self.timeline
        err = self.view.error_index()
        if tl.cursor >= tl.row_count - 1 or (err is not None and tl.cursor_index == err):
            self.playing = False
            self.refresh_status()
            return
        tl.move_to(tl.cursor + 1)
        self._schedule_play()

    def action_speed(self, factor: float) -> None:
        self.speed = min(max(self.speed * factor, 0.125), 64.0)
        self.notify(f"speed ×{self.speed:g}", timeout=1.5)
        self.refresh_status()

    def action_toggle_full(self) -> None:
        self.full_state = not self.full_state

    def action_toggle_reveal(self) -> None:
        self.reveal = not self.reveal

    def action_toggle_expand(self) -> None:
        self.expand = not self.expand

    def action_copy_state(self) -> None:
        view = self._line_view
        if view is None or view.mode not in ("step", "failed"):
            self.notify("no replayed state at this row", severity="warning")
            return
        state = view.step.after if view.step is not None else view.state_before
        # what is copied is what is shown: masked unless r revealed it
        plain = thaw(state)
        shown = plain if self.reveal else mask_secrets(plain)
        data = canonical.dumps_pretty(shown).decode()
        self.app.copy_to_clipboard(data)
        what = "after seq" if view.step is not None else "before the failing line"
        seq = view.event.seq if view.event is not None else view.index + 1
        if self.reveal:
            secrets = ", secrets shown (r masks them)"
        elif shown != plain:
            secrets = ", secret-looking values masked as on screen (r reveals them)"
        else:
            secrets = ""
        self.notify(
            f"copied the state {what} {seq} as JSON ({len(data):,} bytes){secrets}",
            timeout=4,
            markup=False,
        )

    def _prompt(self, screen: PromptScreen[Any], done: Callable[[Any], None]) -> None:
        """Open a prompt through the app, which hands it keys typed ahead."""
        cast(PromptHost, self.app).push_prompt(screen, done)

    def action_quit(self) -> None:
        self.app.exit()

    def bookmark_commands(self) -> Iterable[SystemCommand]:
        """The palette's bookmarks (the app lists them first)."""
        for title, help_text, seq in self.marks.palette():
            yield SystemCommand(title, help_text, partial(self._go_to_seq, seq))

    def action_help(self) -> None:
        rows = [(shown, desc) for _, _, desc, shown, _ in KEYS]
        rows[-2:-2] = PANE_KEYS  # before ? and q, which close the list
        self.app.push_screen(HelpScreen(rows))
