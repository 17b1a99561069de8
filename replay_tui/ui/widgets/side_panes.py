"""The side panes: the state at the cursor (diff or full), the watch list
and the receipt inspector, for one line view of the run. The line view is
made in this very frame when the engine can answer at once (built-in rules
over the state store: a step costs what the event changed), else in a
worker of its own."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.worker import get_current_worker

from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import mask_secrets
from replay_tui.core.words import plural
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.langgraph.store import split_thread
from replay_tui.formats.sessions import CODEX, SESSION_FORMATS
from replay_tui.questions.condition import StatePath
from replay_tui.ui.features.run.clipboard import state_to_copy
from replay_tui.ui.messages import FirstViewShown, StatusChanged, ViewReady, WatchChanged
from replay_tui.ui.screens.whole_result import ResultReader
from replay_tui.ui.widgets.receipt_pane import ReceiptPane
from replay_tui.ui.widgets.state_pane import StatePane
from replay_tui.ui.widgets.watch_pane import WatchPane
from replay_tui.views.runview import LineView, RunView
from replay_tui.views.subagents import SubAgents, subgraph_runs

#: A view that took longer than this on the UI thread sends the next ones to a worker.
INLINE_VIEW_SECONDS = 0.03

#: What the screen adds to the state pane: a note where no state is shown
#: yet, and compare mode's lines (None: not comparing).
Extras = tuple[str, list[Text] | None]


class SidePanes(Vertical):
    """State, watch list and receipt, for the line view shown."""

    def __init__(self, view: RunView, watchlist: WatchPane, extras: Callable[[], Extras]) -> None:
        super().__init__(id="side")
        self.watchlist = watchlist
        self._extras = extras
        self.line_view: LineView | None = None
        #: The state pane shows the full state (``d``), secret-looking values
        #: (``r``), long values whole (``x``).
        self.full = self.reveal = self.expand = False
        #: The run view shown (the screen swaps it with the replay).
        self.view = view
        self.state_pane = StatePane(id="state")
        self.receipt_pane = ReceiptPane(id="receipt")
        self._wanted: int | None = None
        self._slow = False
        self._drawn = False  # the first line view is drawn (the reader waits for it)

    def compose(self) -> ComposeResult:
        yield self.state_pane
        yield self.watchlist
        yield self.receipt_pane

    def on_mount(self) -> None:
        self.state_pane.border_title = "state"
        self.receipt_pane.border_title = "receipt"

    def flip(self, toggle: str) -> None:
        """``d`` / ``r`` / ``x``: flip ``full``, ``reveal`` or ``expand``."""
        setattr(self, toggle, not getattr(self, toggle))
        self.render_view()
        self.post_message(StatusChanged())  # the status says "secrets shown"

    def open_transcript(self, subagents: SubAgents, of: str) -> tuple[Replay, str] | None:
        """``t``: the replay of the sub-agent transcript of the call at the
        cursor, or of the subgraph the task at the cursor ran (LangGraph),
        with the label of its screen (``of``: this run's); None (said why)."""
        view = self.line_view
        event = view.event if view is not None else None
        subgraphs = subgraph_runs(subagents.replay, event)
        if subgraphs:
            return self._open_subgraph(subgraphs, of)
        path = subagents.at(event)
        origin = None if path is not None else subagents.origin(event)
        if path is None and origin is None:
            said = (
                "t opens a sub-agent's transcript (at its Task or spawn_agent call or result), "
                "at a Codex rollout's session_meta the rollout it was forked from or spawned "
                "by, or a LangGraph subgraph's thread (at a write or checkpoint of its task)"
            )
            self.notify(said, timeout=4)
            return None
        codex = path is None or subagents.replay.paths.format == CODEX
        rules = "codex" if codex else "claude_code"
        try:
            replay, _ = open_replay(str(path or origin), rules, watchdog=False, history=True)
        except CannotRun as exc:
            self.notify(str(exc), severity="error", markup=False)
            return None
        return replay, f"{replay.paths.name} · sub-agent of {of} (Esc returns)"

    def _open_subgraph(self, runs: list[str], of: str) -> tuple[Replay, str] | None:
        """The first of the subgraphs at the cursor (the others named)."""
        try:
            replay, _ = open_replay(runs[0], "langgraph", watchdog=False, history=True)
        except CannotRun as exc:
            self.notify(str(exc), severity="error", markup=False)
            return None
        if len(runs) > 1:
            others = ", ".join(split_thread(r)[2] or "" for r in runs[1:])
            self.notify(f"{len(runs)} subgraphs ran here; the others: {others}", timeout=6)
        return replay, f"{replay.paths.name} · subgraph of {of} (Esc returns)"

    def open_result(self) -> None:
        """``o``: the receipt or recorded result at the cursor, whole, on a screen of its own."""
        found = self.result_to_read()
        if found is not None:
            self.app.push_screen(ResultReader(*found))

    def result_to_read(self) -> tuple[str, Any] | None:
        """``o``: the title and value of the receipt or recorded result at the
        cursor, masked unless ``r`` reveals; None (said why) if there is none."""
        view = self.line_view
        title, value = None, None
        if view is not None and view.receipt is None and view.record is not None:
            title, value = view.record
            if view.record_later is not None:  # recorded later: both, never mixed
                later_title, later = view.record_later
                value = {"now": value, f"later in this run: {later_title}": later}
        elif view is not None and view.receipt is not None and view.receipt.receipt is not None:
            receipt = view.receipt.receipt
            if receipt.data is not None:
                title = f"receipt {view.receipt.call_id} · {plural(receipt.size, 'byte', sep=True)}"
                value = receipt.data
        if title is None and view is not None and view.event is not None:
            # no call here: the event itself whole (a compaction's summary, a long prompt)
            title = f"seq {view.event.seq} · {view.event.kind} · the event whole"
            value = view.event.fields
        if title is None:
            said = "o reads a receipt, a recorded result or an event whole: put the cursor on one"
            self.notify(said, timeout=4)
            return None
        return title, value if self.reveal else mask_secrets(value)

    def show_line(self, view: RunView, index: int) -> None:
        """Show line ``index`` of ``view`` (not yet indexed: shown when its rows come)."""
        if index >= view.row_count():
            return
        self._wanted, self.view = index, view
        replay = view.replay
        # a session's results are read from their own lines, of many MB at times
        elsewhere = replay.paths.format in SESSION_FORMATS
        if replay.history is None or replay.guarded or self._slow or elsewhere:
            self._load(view, index)
            return
        self.workers.cancel_group(self, "view")  # a worker's older answer is stale
        started = time.perf_counter()
        shown = view.line_view(index)
        # a machine this slow is better served off the UI thread
        self._slow = time.perf_counter() - started > INLINE_VIEW_SECONDS
        self.show(shown)

    def show(self, view: LineView | None) -> None:
        """Show this line view (None: nothing), as it is: an answer still on
        its way from a worker is no longer wanted."""
        self.workers.cancel_group(self, "view")
        self._wanted = None
        self.line_view = view
        self.render_view()

    def refresh_outdated(self) -> None:
        """Validation went on: a view whose words depend on how far it got
        (a record changed later, what is still open at the last event) is
        made again."""
        view = self.line_view
        if view is None or view.valid == self.view.replay.valid:
            return
        if view.record is not None or view.still_open is not None:
            self.show_line(self.view, view.index)

    def refresh_waiting(self) -> None:
        """A row shown as waiting (not validated yet, or its receipt pending)
        may have moved on: show it again (a receipt arriving, say)."""
        view = self.line_view
        if view is not None and view.mode in ("pending", "receipt"):
            self.show_line(self.view, view.index)

    @work(thread=True, exclusive=True, group="view", exit_on_error=False)
    def _load(self, view: RunView, index: int) -> None:
        """Replay to the line (from the nearest checkpoint)."""
        shown = view.line_view(index)
        if not get_current_worker().is_cancelled:
            self.post_message(ViewReady(index, shown))

    def on_view_ready(self, message: ViewReady) -> None:
        message.stop()
        if message.index == self._wanted:  # else the cursor moved on: a newer one comes
            self.line_view = message.view
            self.render_view()
            self.post_message(StatusChanged())

    def render_view(self) -> None:
        """Draw the panes again (the view, a toggle or compare mode changed)."""
        view = self.line_view
        if view is not None and not self._drawn:
            self._drawn = True
            self.call_after_refresh(self.post_message, FirstViewShown())
        note, compare = self._extras()
        state = self.state_pane
        state.show(
            view,
            full=self.full,
            reveal=self.reveal,
            expand=self.expand,
            pending_note=note,
            compare=compare,
        )
        self.receipt_pane.show(view, reveal=self.reveal, expand=self.expand)
        initial = view is not None and view.mode == "initial"
        state.border_title = "full state" if self.full or initial else "state diff"
        if self.watchlist.watched is not None and self.watchlist.reveal != self.reveal:
            self.watchlist.reveal = self.reveal
            self.watchlist.refresh()

    # -- the watch --------------------------------------------------------------
    def on_state_pane_watch(self, message: StatePane.Watch) -> None:
        """``w`` in the state pane: watch the path at its cursor."""
        message.stop()
        if message.path is None:
            said = "put the state pane's cursor on a value or a change line to watch it"
            self.notify(said, severity="warning", timeout=4)
        else:
            self.start_watch(message.path)

    def start_watch(self, path: StatePath) -> None:
        """Watch the value at ``path``: the seqs where it changed, listed (and
        marked in the timeline's gutter by the screen)."""
        self.watchlist.reveal = self.reveal
        self.watchlist.start(path, self.view.replay, self._kind_of)
        self.watchlist.focus()  # Enter goes to a change; j / k still step
        self.post_message(WatchChanged())

    def stop_watch(self) -> bool:
        """Stop watching; False if nothing was watched."""
        if self.watchlist.watched is None:
            return False
        self.watchlist.stop()
        self.post_message(WatchChanged())
        return True

    def _kind_of(self, seq: int) -> str:
        view, index = self.view, seq - 1
        if not 0 <= index < view.row_count():
            return ""
        return view.row(index).kind or ""

    def copy_state(self) -> None:
        """``y``: the state shown, as JSON, masked as on screen."""
        found = state_to_copy(self.line_view, reveal=self.reveal)
        if found is None:
            self.notify("no replayed state at this row", severity="warning")
            return
        data, said = found
        self.app.copy_to_clipboard(data)
        self.notify(said, timeout=4, markup=False)
