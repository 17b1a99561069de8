"""The watch pane: every seq at which a watched state path changed.

On the Line API like the timeline: a path that changes at every other event
of a million-event run is a long list, and only the rows on screen are drawn.
The pane owns the watch: the path, the scan that finds where it changed
(a thread worker of its own, dying with it) and its piece of the status
line. Enter asks the screen to go to the row's seq; Esc on the screen
stops the watch. Atop the list, the value over seq as a chart, the screen's
cursor marked (``watch_chart.py``; ``C`` hides it).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from rich.segment import Segment
from rich.text import Text
from textual import events, work
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from replay_tui.core.safe_text import MASK, escape_controls, is_secret_key
from replay_tui.core.words import plural
from replay_tui.engine.replay import Replay
from replay_tui.questions.across import (
    LengthScan,
    PathChange,
    PathScan,
    iter_path_changes,
    resolve,
    shown_value,
)
from replay_tui.questions.condition import ABSENT, StatePath, format_path
from replay_tui.state.diff import Change, diff
from replay_tui.state.persistent import thaw
from replay_tui.ui.cancel import WorkerCancelled
from replay_tui.ui.keys import bindings_for
from replay_tui.ui.messages import WatchFound
from replay_tui.ui.widgets.state_pane import ROW_CURSOR_KEYS
from replay_tui.ui.widgets.watch_chart import (
    ChartFound,
    WatchChart,
    by_length,
    changes_chunk,
    length_batches,
)

OP_STYLES = {"added": "bold #a6d189", "removed": "bold #e78284", "changed": "bold #e5c890"}
#: Characters of a value shown in a row (the state pane shows it whole).
SHOWN = 60
#: An object changed inside is shown by the field that changed up to this size.
INNER_ITEMS = 200


def _shown(value: Any, reveal: bool) -> str:
    return escape_controls(shown_value(value, SHOWN, reveal=reveal))


def _seq_of(change: PathChange) -> int:
    return change.seq


def _inner_changes(old: Any, new: Any) -> list[Change]:
    """What changed inside a watched object or list (both small: a row is
    drawn often), by path relative to it; [] for anything else."""
    small = (Mapping, list, tuple)
    if not (isinstance(old, small) and isinstance(new, small)):
        return []
    if len(old) > INNER_ITEMS or len(new) > INNER_ITEMS:
        return []
    return diff(thaw(old), thaw(new))


class WatchPane(ScrollView, can_focus=True):
    """``seq  kind  old → new`` for each change of the watched path."""

    BINDINGS: ClassVar[list[BindingType]] = [*ROW_CURSOR_KEYS, *bindings_for("watch")]
    COMPONENT_CLASSES = {"watch-pane--cursor", "watch-pane--seq"}

    cursor: reactive[int] = reactive(0, repaint=False, init=False)

    class Jump(Message):
        """Go to ``seq`` (Enter on a row)."""

        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.changes: list[PathChange] = []
        #: The kind of the event at a seq (the app's rows know it).
        self.kind_of: Callable[[int], str] = lambda seq: ""
        #: Reads a value left in the state store (``across.Later``), frozen.
        self.resolve: Callable[[Any], Any] = lambda value: value
        self.reveal = False
        self.note = ""
        #: The watched path (None: nothing watched), and whether the scan
        #: is done, up to seq ``until`` (a followed run scans on from there).
        self.watched: StatePath | None = None
        self.done = False
        self.until = 0
        #: What changed inside a watched object, by row (see _inner_changes).
        self._inner: LRUCache[int, list[Change]] = LRUCache(256)
        self.chart = WatchChart()
        #: The screen's cursor, marked on the chart.
        self.chart_seq = 0
        #: The length scan of a watched object or list, resumed when a run grows.
        self._length_scan: LengthScan | None = None
        #: Bumped by each start and stop: a scan's answers name the watch they
        #: are for, and one still on its way from an earlier watch (of the
        #: same path, say) is dropped.
        self._watch = 0

    # -- the watch ----------------------------------------------------------
    def start(self, path: StatePath, replay: Replay, kind_of: Callable[[int], str]) -> None:
        """Watch the value at ``path``: scan for every seq where it changed."""
        self.watched, self.done, self.until = path, False, 0
        self._watch += 1
        self.kind_of = kind_of
        self.resolve = lambda value: resolve(replay, path, value, frozen=True)
        self.cursor = 0
        self._length_scan = None
        self.chart.reset(path)
        self.set_changes([], "")
        self._show_progress(replay.valid)
        self.scan(replay, path, self._watch)

    def stop(self) -> None:
        self.workers.cancel_group(self, "watch")
        self._watch += 1
        self.watched = None
        self._length_scan = None
        self.chart.reset(None)
        self.set_changes([], "")

    def run_grew(self, replay: Replay) -> None:
        """A followed run grew past the scan: scan on from where it stopped."""
        path = self.watched
        if path is None or not self.done or replay.history is None:
            return
        if replay.valid > self.until:
            self.done = False
            self.scan(replay, path, self._watch, self.until)

    def marked_rows(self) -> frozenset[int]:
        """Timeline rows (ledger lines) where the value changed."""
        return frozenset(c.seq - 1 for c in self.changes)

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def scan(self, replay: Replay, path: StatePath, watch: int, start: int = 0) -> None:
        """Every seq after ``start`` where the value at ``path`` changed,
        posted in batches (from a later ``start``: a run that grew), each
        with its values for the chart; an object or list is charted by its
        length, scanned after the list."""
        cancelled = WorkerCancelled(get_current_worker())
        until = replay.valid
        started = last = time.perf_counter()
        sized = by_length(replay.history, path, until)
        fresh = not start  # the chart's series starts with the first batch
        batch: list[PathChange] = []

        def chart_batch() -> None:
            nonlocal fresh
            if not sized and batch:
                chunk = changes_chunk(batch)
                self.post_message(ChartFound(path, chunk, batch[0].old, until, fresh, False, watch))
                fresh = False

        if start and replay.history is not None:
            found = PathScan(replay.history, path, start).advance(until, cancelled)
        else:
            found = iter_path_changes(replay, path, until, cancelled)
        for change in found:
            batch.append(change)
            now = time.perf_counter()
            if now - last > 0.1:
                chart_batch()
                self.post_message(WatchFound(path, batch, False, until, now - started, watch))
                batch, last = [], now
        if cancelled.is_set():
            return
        chart_batch()
        if sized and replay.history is not None:
            self._scan_length(replay, path, watch, until, start, cancelled)
        if not cancelled.is_set():
            done = time.perf_counter() - started
            self.post_message(WatchFound(path, batch, True, until, done, watch))

    def _scan_length(
        self,
        replay: Replay,
        path: StatePath,
        watch: int,
        until: int,
        start: int,
        cancelled: WorkerCancelled,
    ) -> None:
        """The length of the watched object or list at each seq it changed,
        for the chart (the scan worker's: resumed where it stopped)."""
        assert replay.history is not None
        scan = self._length_scan if start else None
        fresh = scan is None
        if scan is None:
            scan = LengthScan(replay.history, path)
        initial = scan.value
        for chunk in length_batches(scan, until, cancelled):
            self.post_message(ChartFound(path, chunk, initial, until, fresh, True, watch))
            fresh = False
        if not cancelled.is_set():
            self._length_scan = scan

    def on_chart_found(self, message: ChartFound) -> None:
        """The chart's values of a batch (its WatchFound follows and redraws)."""
        message.stop()
        if message.watch == self._watch:
            self.chart.add(message)

    def on_watch_found(self, message: WatchFound) -> None:
        """A batch of changes: shown; the message goes on up to the screen,
        which marks the timeline."""
        if message.watch != self._watch:  # an earlier watch's, still on its way
            message.stop()
            return
        self.changes.extend(message.changes)
        self.done = message.done
        if message.done:
            self.until = message.until
        self._show_progress(message.until)

    def _show_progress(self, until: int) -> None:
        assert self.watched is not None
        count = len(self.changes)
        where = escape_controls(format_path(self.watched))
        if self.done:
            self.border_title = f"watch {where} · {plural(count, 'change', sep=True)}"
            note = f"{where} never changed in events 1..{until}"
        else:
            self.border_title = f"watch {where} · {count:,} so far…"
            note = "searching…"
        self.border_subtitle = "Enter: go there · Esc: stop"
        self.set_changes(self.changes, note)

    def status(self, text: Text) -> None:
        """Its piece of the status line."""
        if self.watched is None:
            return
        shown = plural(len(self.changes), "change", sep=True) + ("" if self.done else "…")
        where = escape_controls(format_path(self.watched))
        text.append(f"  watching {where}: {shown}", style="#ef9f76")

    # -- drawing --------------------------------------------------------------
    def set_changes(self, changes: list[PathChange], note: str) -> None:
        """Show these changes (the same list, grown, while the scan runs)."""
        if changes is not self.changes:
            self._inner.clear()
        self.changes = changes
        self.note = note
        self._size_content()
        self.cursor = min(self.cursor, max(0, len(changes) - 1))
        self.refresh()

    def _chart_rows(self) -> int:
        # the pane's height, not the viewport's: a scrollbar the chart's rows
        # bring must not take them away again
        return self.chart.rows_for(self.size.height, self.scrollable_content_region.width)

    def _size_content(self) -> None:
        """The list's rows below the chart's (which stay put as it scrolls);
        no width to scroll (rows are cut to fit)."""
        self.virtual_size = Size(0, max(1, len(self.changes)) + self._chart_rows())

    def on_resize(self) -> None:
        self._size_content()

    def select_seq(self, seq: int) -> None:
        """Put the cursor on the change at ``seq``, or the last one before it
        (O(log changes)), and mark ``seq`` on the chart."""
        pos = bisect.bisect_right(self.changes, seq, key=_seq_of) - 1
        if pos >= 0:
            self.cursor = pos
        if seq != self.chart_seq:
            self.chart_seq = seq
            rows = self._chart_rows()
            if rows:
                self.refresh(Region(0, 0, self.size.width, rows + 1))

    def action_toggle_chart(self) -> None:
        """``C``: show or hide the chart."""
        self.chart.shown = not self.chart.shown
        self._size_content()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        chart_rows = self._chart_rows()
        if y < chart_rows:
            self.chart.reveal = self.reveal
            return self.chart.line(y, chart_rows, width, self.chart_seq, self.app.console, base)
        y -= chart_rows
        row = y + self.scroll_offset.y
        if not self.changes:
            text = Text(self.note if y == 0 else "", style="dim")
            return (
                Strip(text.render(self.app.console)).apply_style(base).crop_extend(0, width, base)
            )
        if row >= len(self.changes):
            return Strip.blank(width, base)
        change = self.changes[row]
        seq_width = len(str(self.changes[-1].seq))
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(
            f"{change.seq:>{seq_width}}  ", style=self.get_component_rich_style("watch-pane--seq")
        )
        text.append(escape_controls(self.kind_of(change.seq)) + "  ")
        old, new = self.resolve(change.old), self.resolve(change.new)
        inner = self._inner.get(row)
        if inner is None:  # drawn again at every repaint: diffed once
            inner = self._inner[row] = _inner_changes(old, new)
        if inner:  # an object or list changed inside: say which field
            first = inner[0]
            masked = not self.reveal and any(
                isinstance(k, str) and is_secret_key(k) for k in first.path
            )
            text.append(escape_controls(format_path(first.path)) + ": ", style="bold")
            old, new = (MASK, MASK) if masked else (first.old, first.new)
            op = "added" if old is ABSENT else ("removed" if new is ABSENT else "changed")
            text.append(_shown(old, self.reveal), style="dim" if old is ABSENT else None)
            text.append(" → ", style=OP_STYLES[op])
            text.append(_shown(new, self.reveal), style="dim" if new is ABSENT else None)
            if len(inner) > 1:
                text.append(f"  (+{len(inner) - 1} more)", style="dim")
        else:
            text.append(_shown(old, self.reveal), style="dim" if old is ABSENT else None)
            text.append(" → ", style=OP_STYLES[change.op])
            text.append(_shown(new, self.reveal), style="dim" if new is ABSENT else None)
        text.truncate(width, overflow="ellipsis", pad=True)
        strip = Strip(text.render(self.app.console), text.cell_len).apply_style(base)
        strip = strip.crop_extend(0, width, base)
        if row == self.cursor:
            style = self.get_component_rich_style("watch-pane--cursor")
            if not self.has_focus:
                style = style + self.get_component_rich_style("watch-pane--seq")
            strip = Strip(Segment.apply_style(iter(strip), post_style=style), width)
        return strip

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        # the row, and as many below it as the chart takes above the list
        region = Region(0, new, 1, 1 + self._chart_rows())
        self.scroll_to_region(region, animate=False, immediate=True)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        chart_rows = self._chart_rows()
        if offset.y < chart_rows:  # the chart: go to the seq under the click
            seq = self.chart.seq_at(offset.x) if offset.y else None
            if seq is not None:
                self.post_message(self.Jump(seq))
            return
        row = offset.y - chart_rows + self.scroll_offset.y
        if 0 <= row < len(self.changes):
            self.cursor = row
            if event.chain >= 2:
                self.action_jump()

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(self.cursor + delta, len(self.changes) - 1))

    def action_cursor_page(self, direction: int) -> None:
        rows = self.scrollable_content_region.height - self._chart_rows()
        self.action_cursor(direction * max(1, rows - 1))

    def action_cursor_to(self, row: int) -> None:
        self.cursor = max(0, len(self.changes) - 1) if row < 0 else row

    def action_jump(self) -> None:
        if 0 <= self.cursor < len(self.changes):
            self.post_message(self.Jump(self.changes[self.cursor].seq))
