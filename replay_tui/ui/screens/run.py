"""The run on screen: timeline, state diff and receipt inspector.

Layout lives in ``app.tcss``. The screen holds the widgets (``widgets/``),
the keys that work from every pane (``keys.py``), thin wrappers of the thread
workers (they die with the screen) and the handlers of what they tell it.
What to do is decided by controllers with no Textual in them, each beside
the keeper that runs its workers (``features/``): the run session, the
cursor's owner and the tail rider (``features/run/``), search and filter,
comparison, bookmarks, playback. The watch pane owns its watch; the status
line composes itself from the pieces.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen

from replay_tui.engine.replay import Replay
from replay_tui.questions.condition import Condition
from replay_tui.ui.features.bookmarks.controller import Marks
from replay_tui.ui.features.bookmarks.keeper import MarkKeeper
from replay_tui.ui.features.compare.controller import Comparison
from replay_tui.ui.features.compare.keeper import CompareKeeper
from replay_tui.ui.features.run.causes import CauseTrail
from replay_tui.ui.features.run.controller import RunSession
from replay_tui.ui.features.run.cursor import CursorOwner
from replay_tui.ui.features.run.keeper import RunReader
from replay_tui.ui.features.run.tail import TailRider
from replay_tui.ui.features.search.controller import Search, Turn
from replay_tui.ui.features.search.keeper import SearchKeeper
from replay_tui.ui.keys import bindings_for, help_rows
from replay_tui.ui.messages import (
    Advanced,
    CompareChanged,
    FilterReady,
    MarksChanged,
    Notice,
    Progress,
    Rewritten,
    RulesReloaded,
    StuckChanged,
    TurnFound,
    WatchFound,
)
from replay_tui.ui.screens.help import HelpScreen
from replay_tui.ui.screens.prompts import (
    FilterScreen,
    GotoScreen,
    PromptHost,
)
from replay_tui.ui.widgets.footer import FittedFooter
from replay_tui.ui.widgets.overview import TimelineBox
from replay_tui.ui.widgets.side_panes import Extras, SidePanes
from replay_tui.ui.widgets.status_line import StatusBar, status_text
from replay_tui.ui.widgets.timeline import Timeline
from replay_tui.ui.widgets.watch_pane import WatchPane
from replay_tui.views.runview import LineView, RunView


class ReplayScreen(Screen[None]):
    """The run on screen: layout, the keys that work from every pane, the
    workers (they die with the screen) and what they tell it."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings_for("screen"))

    validating = var(True, toggle_class="-validating")
    live = var(False, toggle_class="-live")
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
        nested: bool = False,
    ) -> None:
        super().__init__()
        #: A sub-agent's transcript over its session: Esc goes back to it.
        self.nested = nested
        self.session = RunSession(
            replay, label=label, reducer_spec=reducer_spec, watch_rules=watch_rules
        )
        self.cursor = CursorOwner(start_seq)
        #: Compare mode: B beside this run (another run, other rules, or a
        #: what-if branch: ``against.skip``), and where they part.
        self.compare = Comparison(against, strict=strict_events)
        self.search = Search()
        self.marks = Marks()
        self.timeline = Timeline(self.view, id="timeline")
        self.watchlist = WatchPane(id="watch")
        self.side = SidePanes(self.view, self.watchlist, self._side_extras)
        self.status_bar = StatusBar(self.status_text, id="status")
        self.reader = RunReader(self.session)
        self.compare_keeper = CompareKeeper(self.compare)
        self.search_keeper = SearchKeeper(self.search, lambda: self.session.view)
        self.mark_keeper = MarkKeeper(self.marks, lambda: self.session.replay)
        self.trail = CauseTrail()

    # -- what the session holds, by the names the widgets and tests use --------
    @property
    def replay(self) -> Replay:
        return self.session.replay

    @property
    def view(self) -> RunView:
        return self.session.view

    @property
    def following(self) -> bool:
        return self.session.following

    @property
    def riding(self) -> bool:
        """The cursor rides the tail of the growing ledger."""
        return self.timeline.tail.riding

    @property
    def playing(self) -> bool:
        """Playback (``p``) steps the cursor on its own."""
        return self.timeline.playback.playing

    @property
    def at_initial(self) -> bool:
        """Prefix 0 is shown (the initial state, before event 1)."""
        return self.timeline.before_first

    def watch_live(self, live: bool) -> None:
        self.timeline.following = live

    # -- layout -------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield self.status_bar
        with Horizontal(id="main"):
            yield TimelineBox(self.timeline)
            yield self.side
        yield FittedFooter()
        yield self.reader
        yield self.mark_keeper
        yield self.compare_keeper
        yield self.search_keeper

    def on_mount(self) -> None:
        self.timeline.focus()
        self.live = self.following
        self.refresh_status()

    def _widgets_gone(self) -> bool:
        return not self.timeline.is_attached

    def _stale(self, replay: Replay) -> bool:
        """A message about a replay no longer shown (or the app is closing)."""
        return not self.session.is_current(replay) or self._widgets_gone()

    def on_stuck_changed(self, message: StuckChanged) -> None:
        self.stuck = message.stuck
        self.refresh_status()

    # -- messages up: reading -------------------------------------------------
    def on_progress(self, message: Progress) -> None:
        if self._stale(message.replay):
            return
        self.session.fraction = message.fraction
        self._rows_grew()
        self._reach_pending_seq()

    def _rows_grew(self) -> None:
        if self.timeline.rows_grew(shown=self.line_view is not None):
            self.side.refresh_waiting()
        self.refresh_status()

    def on_advanced(self, message: Advanced) -> None:
        if self._stale(message.replay):
            return
        if self.replay.pending is not None:
            self.reader.receipt_pending()
        self.validating = False
        self.session.advanced(message.valid)
        self.live = self.following
        self._rows_grew()
        self.side.refresh_outdated()
        self._after_rewrite()
        self.compare_keeper.find_differences(self.replay)
        self.watchlist.run_grew(self.replay)
        self._reach_pending_seq()
        news, go = self.cursor.error_found(self.view.error_index(), self.timeline.cursor_index)
        if news:
            self.timeline.tail.riding = False
        if go is not None:
            self.timeline.move_to_index(go)
        self.refresh_status()

    def _reach_pending_seq(self) -> None:
        """Go to the seq a link or ``:`` asked for as soon as validation has reached it."""
        seq = self.cursor.pending_due(self.replay)
        if seq is not None:
            self.call_after_refresh(self._open_at, seq)  # after the first row's own move

    def _open_at(self, seq: int) -> None:
        """Go to the seq a link named: the last event if it is past the end."""
        seq, said = self.cursor.within_run(self.view, seq)
        if said is not None:
            self.notify(said, severity="warning", timeout=6)
        self.go_to_seq(seq)

    def on_rewritten(self, message: Rewritten) -> None:
        if self._stale(message.replay):
            return
        place = (None if self.riding else self.cursor_seq(),)
        self.set_replay(self.session.rewritten(message.why, place))
        self.refresh_status()

    def _after_rewrite(self) -> None:
        """The new history is read: the banner goes (a notice says what
        happened), and the person is back where they were, or riding."""
        found = self.session.after_rewrite()
        if found is None:
            return
        said, (place,) = found
        self.notify(said, severity="warning", timeout=10, markup=False)
        if place is None:
            self.action_last()  # riding, as before
            return
        self._open_at(place)
        self.timeline.tail.leave(self.view.row_count())

    def on_rules_reloaded(self, message: RulesReloaded) -> None:
        if self._widgets_gone():
            return
        self.set_replay(message.replay)
        self.session.rules_reloaded(message.difference)
        self.timeline.rows_changed()
        self.refresh_status()

    def set_replay(self, replay: Replay) -> None:
        """Show another replay of the same run (reloaded, or new rules), keeping the cursor."""
        cursor = self.timeline.cursor_index or 0
        old = self.session.swap(replay)
        self.timeline.source = self.view
        self.side.line_view, self.side.view = None, self.view
        self.cursor.new_replay()
        self.validating = True
        self.search.clear_filter()
        self.timeline.show_only(None)
        self.reader.restart()
        self.timeline.move_to(cursor, force=True)
        if old is not replay:
            old.close()

    # -- messages up: the cursor and the panes ---------------------------------
    @on(Timeline.CursorMoved)
    def _cursor_moved(self, message: Timeline.CursorMoved) -> None:
        if self._widgets_gone():
            return
        self.cursor.moved(message.index)
        if self.timeline.clicked:
            self.timeline.clicked = False
            self.cursor.person_moves()
        self.side.show_line(self.view, message.index)
        if self.watchlist.watched is not None:
            self.watchlist.select_seq(self.cursor_seq())
        self.refresh_status()

    def on_filter_ready(self, message: FilterReady) -> None:
        if self._widgets_gone():
            return
        self.timeline.show_only(message.found)
        self.refresh_status()
        if not len(message.found):
            self.side.show(None)

    def on_first_view_shown(self) -> None:
        self.reader.first_view_shown()

    def on_status_changed(self) -> None:
        self.refresh_status()

    def on_compare_changed(self, message: CompareChanged) -> None:
        if self._widgets_gone():
            return
        if message.differences:
            self.timeline.set_differs(frozenset(self.compare.differs or ()))
        self.compare_keeper.find_differences(self.replay)
        self.side.render_view()
        self.refresh_status()

    def on_marks_changed(self, message: MarksChanged) -> None:
        if not self._widgets_gone():
            self.timeline.set_bookmarks(message.rows)
            self.refresh_status()

    def on_notice(self, message: Notice) -> None:
        if not self._widgets_gone():
            severity = cast(SeverityLevel, message.severity)
            self.notify(message.text, severity=severity, timeout=message.timeout, markup=False)

    def on_turn_found(self, message: TurnFound) -> None:
        if not self._widgets_gone():
            self.go_to_seq(message.seq)

    def on_watch_found(self, message: WatchFound | None = None) -> None:
        """The watch took changes (or started, or stopped): marked in the timeline."""
        if not self._widgets_gone():
            self.watchlist.select_seq(self.cursor_seq())
            self.timeline.set_marks(self.watchlist.marked_rows())
            self.refresh_status()

    def on_watch_changed(self) -> None:
        self.watching = self.watchlist.watched is not None
        if not self.watching and self.focused is self.watchlist:
            self.timeline.focus()
        self.on_watch_found()

    @on(WatchPane.Jump)
    def _watch_jump(self, message: WatchPane.Jump) -> None:
        self.cursor.person_moves()
        self.go_to_seq(message.seq)

    # -- where the cursor is -------------------------------------------------
    def go_to_seq(self, seq: int) -> None:
        """Put the cursor on ``seq`` (0: the initial state), clearing a filter that hides it."""
        self.cursor.person_moved = True
        if seq == 0:
            self._enter_initial()
            return
        index = self.view.index_of_seq(seq)
        if index < 0:
            self.notify(f"seq {seq} is not in the timeline", severity="warning")
            return
        if not self.timeline.move_to_index(index) and self.search.filter_text:
            self.notify(f"seq {seq} was hidden by the filter: cleared it", timeout=3)
            self.apply_filter("")
            self.timeline.move_to_index(index)

    def cursor_seq(self) -> int:
        """The prefix the cursor shows: 0 at the initial state."""
        return self.timeline.prefix_seq()

    def _enter_initial(self) -> None:
        """Show prefix 0: the state the rules start from, every event to come."""
        if self.timeline.enter_initial():
            self.side.show(self.view.initial_view())
            self.refresh_status()

    # -- drawing ------------------------------------------------------------
    @property
    def line_view(self) -> LineView | None:
        """What the side panes show: the line view at the cursor."""
        return self.side.line_view

    def _side_extras(self) -> Extras:
        """The state pane's note where no state is shown yet, and compare mode's lines."""
        pending = f"validating… {self.session.fraction:.0%}" if self.validating else ""
        if self.search.nothing_matches():
            pending = f"no rows match {self.search.filter_text!r} (Esc clears the filter)"
        return pending, self.compare.lines(self.replay, self.cursor_seq(), reveal=self.reveal)

    def status_text(self) -> Text:
        """The status line as it is now (the status bar draws it)."""
        return status_text(self)

    def refresh_status(self) -> None:
        """The status line changed: drawn once, at the next frame."""
        self.status_bar.changed()

    @property
    def reveal(self) -> bool:
        """Secret-looking values are shown (``r``)."""
        return self.side.reveal

    def action_flip(self, toggle: str) -> None:
        self.side.flip(toggle)

    # -- actions ------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        self.cursor.person_moves()
        if delta < 0 and self.timeline.cursor == 0 and not self.at_initial:
            self._enter_initial()
        else:
            self.timeline.step(delta)

    def action_page(self, direction: int) -> None:
        self.cursor.person_moves()
        self.timeline.page(direction)

    def action_first(self) -> None:
        self.cursor.person_moves()
        self.timeline.first()

    def action_last(self) -> None:
        self.cursor.person_moves()
        self.timeline.ride_tail()
        self.refresh_status()

    def action_follow(self) -> None:
        """Start following the ledger (or return to its tail)."""
        if not self.following:
            replay = self.reader.follow(comparing=self.compare.b is not None)
            if replay is None:
                return
            self.timeline.tail = TailRider()
            self.reader.watch_folder()  # watching before the new replay's first read
            self.set_replay(replay)
            self.live = True
        self.action_last()

    def action_unfollow(self) -> None:
        """Stop following: judge the ledger as complete, strictly."""
        if self.reader.stop_following():
            self.live = False
            self.refresh_status()

    def action_reload_rules(self) -> None:
        self.reader.reload()

    def action_goto(self) -> None:
        def done(answer: int | Condition | None) -> None:
            if answer is None:
                return
            self.cursor.person_moves()
            if isinstance(answer, Condition):
                self.search_keeper.ask(answer, self.cursor_seq())
            elif (waiting := self.cursor.wait_for(answer, self.replay)) is not None:
                self.notify(waiting, timeout=4)
            else:
                self._open_at(answer)

        cast(PromptHost, self.app).push_prompt(GotoScreen(self.view.goto_range), done)

    def action_problem(self, direction: int) -> None:
        self.cursor.person_moves()
        waiting = self.cursor.error_waiting  # the error they were told of
        if direction > 0 and waiting is not None:
            self.timeline.move_to_index(waiting)
            return
        found = self.view.next_problem(self.timeline.cursor_index or 0, direction)
        if found is None:
            self.notify("no more errors, warnings or failed calls that way", severity="information")
        else:
            self.timeline.move_to_index(found)

    def action_cause(self, direction: int) -> None:
        self.trail.go(direction, self)

    def action_fold_calls(self) -> None:
        self.notify(self.timeline.fold_calls(), timeout=3)

    def action_filter(self) -> None:
        def done(query: str | None) -> None:
            if query is not None:
                self.apply_filter(query)

        cast(PromptHost, self.app).push_prompt(FilterScreen(self.search.filter_text), done)

    def apply_filter(self, query: str) -> None:
        if not self.search_keeper.set_filter(query):
            self.timeline.show_only(None)

    def action_resume_chain(self) -> None:
        """``m``: only what ``claude --resume`` from here loads; again: all."""
        self.search_keeper.resume_chain(self.view, self.cursor_seq(), self.apply_filter)

    def action_escape(self) -> None:
        """Esc: stop watching; else leave compare mode; else forget the
        condition, the filter and a jump still waiting for validation."""
        if self.side.stop_watch():
            return
        if self.compare_keeper.close():
            return
        forgot = self.search_keeper.forget()
        pending = self.cursor.forget_pending()
        if pending is not None:
            self.notify(f"no longer going to seq {pending:,}", timeout=2)
        if self.search.filter_text:
            self.apply_filter("")
        elif self.nested and pending is None and not forgot:
            self.dismiss()

    def action_match(self, direction: int) -> None:
        found = self.search_keeper.next_match(self.cursor_seq(), direction)
        if found == "step":
            self.action_step(direction)
        elif isinstance(found, Turn):
            self.go_to_seq(found.seq)
            self.refresh_status()

    # -- compare mode ---------------------------------------------------------
    def action_difference(self, direction: int) -> None:
        found = self.compare_keeper.next_difference(self.timeline.cursor_index or 0, direction)
        if found is not None:
            self.cursor.person_moves()
            self.timeline.move_to_index(found)

    def action_skip_event(self) -> None:
        self.compare_keeper.skip(self.replay, self.timeline.event_seq(), following=self.following)

    # -- marks: bookmarks, the report, links -----------------------------------
    def action_bookmark(self) -> None:
        self.mark_keeper.toggle(self.timeline.event_seq())

    def action_annotate(self) -> None:
        self.mark_keeper.annotate(self.timeline.event_seq())

    def action_next_bookmark(self) -> None:
        seq = self.mark_keeper.next_after(self.cursor_seq())
        if seq is not None:
            self.go_to_seq(seq)

    def action_write_report(self) -> None:
        self.mark_keeper.write_report(self.cursor_seq(), self.watchlist.watched)

    def action_copy_link(self) -> None:
        self.mark_keeper.copy_link(self.view.link(self.cursor_seq()))

    def bookmark_commands(self) -> Iterable[SystemCommand]:
        """The palette's bookmarks (the app lists them first)."""
        return self.mark_keeper.commands(self.go_to_seq)

    # -- playback -------------------------------------------------------------
    def action_play(self) -> None:
        self.timeline.toggle_play()
        self.refresh_status()

    @on(Timeline.PlayStopped)
    def _play_stopped(self) -> None:
        self.refresh_status()

    def action_speed(self, factor: float) -> None:
        self.notify(self.timeline.playback.faster(factor), timeout=1.5)
        self.refresh_status()

    # -- the rest -------------------------------------------------------------
    def action_copy_state(self) -> None:
        self.side.copy_state()

    def action_open_transcript(self) -> None:
        opened = self.side.open_transcript(self.view.subagents, self.session.label)
        if opened is not None:
            self.app.push_screen(ReplayScreen(opened[0], label=opened[1], nested=True))

    def action_open_result(self) -> None:
        self.side.open_result()

    def on_unmount(self) -> None:
        if self.nested:  # the session's own replay is the CLI's to close
            self.replay.close()

    def action_quit(self) -> None:
        self.app.exit()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(help_rows(), self.replay.line_core))
