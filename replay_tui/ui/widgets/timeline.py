"""The timeline: one row per ledger line, on Textual's Line API.

No widget per event: :meth:`Timeline.render_line` builds only the rows on
screen, from a bounded LRU of rendered strips, so a million rows scroll like
fourteen. The cursor row is the current prefix; rows after it are dimmed
("not yet happened"), the failing row is red, rows after it "not replayed".
Calls folded (``v``) are one row each; spans (calls that nest) a tree, each
row with its bar over the run's time (:mod:`replay_tui.ui.render.span_rows`).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from typing import ClassVar

from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from replay_tui.core.words import plural
from replay_tui.ui.features.run.playback import Playback
from replay_tui.ui.features.run.tail import TailRider
from replay_tui.ui.keys import bindings_for
from replay_tui.ui.render.timeline_rows import (
    Gutter,
    RowSource,
    row_text,
)
from replay_tui.views.calls import Folding


class Timeline(ScrollView, can_focus=True, inherit_bindings=False):
    """Virtual list of rows; ``cursor`` is a position among the visible rows."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings_for("timeline"))

    COMPONENT_CLASSES = {
        "timeline--cursor",
        "timeline--future",
        "timeline--error",
        "timeline--unreplayed",
        "timeline--seq",
        "timeline--offset",
        "timeline--summary",
        "timeline--warning",
        "timeline--mark",
    }

    cursor: reactive[int] = reactive(0, repaint=False, init=False)

    class PlayStopped(Message):
        """Playback reached the end, or the error, and stopped."""

    class CursorMoved(Message):
        """The selected row changed; ``index`` is the ledger line index."""

        def __init__(self, index: int, serial: int = 0) -> None:
            super().__init__()
            self.index = index
            #: Moves are numbered as they are made, to tell one made before
            #: prefix 0 was shown (seen later, as a message) from one after.
            self.serial = serial

    def __init__(self, source: RowSource, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        #: Ledger indexes of the visible rows, or None for all rows.
        self.shown_rows: array[int] | None = None
        #: The span bars' scale, and the rows generation it was read at.
        self._range: tuple[int, tuple[float | None, float | None]] | None = None
        #: The filter's rows (None: no filter), before calls are folded.
        self._filtered: array[int] | None = None
        #: Calls folded into one row each (``v``), or None.
        self.folding: Folding | None = None
        self._cache: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(2000)
        self._generation = 0  # bumped when what rows look like changes
        #: The last move came from a click (the person's, not the app's).
        self.clicked = False
        #: Prefix 0 is shown: the cursor is before the first row.
        self.before_first = False
        #: Ledger indexes marked in the gutter (where a watched path changed).
        self.marks: frozenset[int] = frozenset()
        #: Ledger indexes of the person's bookmarks (marked ◆ in the gutter).
        self.bookmarks: frozenset[int] = frozenset()
        #: Compare mode: ledger indexes where A and B part (marked ≠).
        self.differs: frozenset[int] = frozenset()
        #: While following, the cursor rides the tail until the person moves it.
        self.tail = TailRider()
        #: The ledger is followed (the screen says so).
        self.following = False
        self._moves = 0  # moves made (see CursorMoved.serial)
        self._initial_after = 0  # moves made before prefix 0 was shown
        #: Playing the run at its recorded pace (space).
        self.playback = Playback()
        self._play_timer: Timer | None = None
        self.border_title = "timeline"
        #: Called when rows or the cursor changed (the overview strip redraws).
        self.changed: Callable[[], object] = lambda: None

    # -- rows and positions ---------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.shown_rows) if self.shown_rows is not None else self.source.row_count()

    def index_at(self, position: int) -> int:
        return self.shown_rows[position] if self.shown_rows is not None else position

    def position_of(self, index: int) -> int | None:
        """Where ledger line ``index`` is among the visible rows (None if hidden)."""
        if self.shown_rows is None:
            return index if 0 <= index < self.source.row_count() else None
        order = self.folding.order if self.folding is not None else None
        if order is not None:  # a span tree: depth first
            return order.get(index)
        pos = bisect.bisect_left(self.shown_rows, index)
        return pos if pos < len(self.shown_rows) and self.shown_rows[pos] == index else None

    def target_at(self, position: int) -> int:
        """The ledger line the row at ``position`` stands for: a folded
        call's row, the prefix through its last event so far."""
        index = self.index_at(position)
        return index if self.folding is None else self.folding.target(index)

    @property
    def cursor_index(self) -> int | None:
        return self.target_at(self.cursor) if self.row_count else None

    def show_only(self, shown: array[int] | None) -> None:
        """Show only these ledger indexes (a filter); the cursor stays on its row
        if it is shown, else moves to the next shown row."""
        self._filtered = shown
        self._show(self._folded(shown))

    def _folded(self, shown: array[int] | None) -> array[int] | None:
        if self.folding is None:
            return shown
        index = self.source.call_index()
        if index is None:  # rules reloaded, and the new ones name no calls
            self.folding = None
            return shown
        if index is not self.folding.index:  # a new replay of the run: still folded
            self.folding = Folding(index)
        return self.folding.rows(self.source.row_count(), shown)

    def _show(self, shown: array[int] | None, current: int | None = None) -> None:
        if current is None and self.row_count:
            current = self.index_at(self.cursor)
        if self.folding is not None and current is not None:
            current = self.folding.row_of(current)
        self.shown_rows = shown
        self._subtitle()
        self.rows_changed()
        if current is not None:
            pos = self.position_of(current)
            if pos is None and shown is not None and len(shown):
                pos = self._nearest(shown, current)
            self.move_to(pos or 0, force=True)
            # the new virtual size is applied on the next layout: scroll after it
            self.call_after_refresh(self._scroll_cursor_visible)

    # -- calls folded (v) ---------------------------------------------------
    def fold_calls(self) -> str:
        """``v``: one row per call, or every event again; what happened, in words."""
        index = self.source.call_index()
        if index is None:
            return "these rules do not say which events make a call: nothing to fold"
        current = self.cursor_index if self.row_count and not self.before_first else None
        self.folding = Folding(index) if self.folding is None else None
        self._show(self._folded(self._filtered), current)
        if self.folding is None:
            return "every event has its row again"
        folded = f"{plural(index.calls, 'call', sep=True)} folded into one row each"
        return folded + (", as a span tree" if self.folding.tree else "")

    def _subtitle(self) -> None:
        """Say how the rows are folded, and the keys that fold them."""
        if self.folding is None:
            self.border_subtitle = ""
        elif self.folding.tree:
            self.border_subtitle = "span tree · Enter/→ opens, then unfolds · ← folds · v: all"
        else:
            self.border_subtitle = "calls folded · Enter/→ unfolds · ← folds · v: every event"

    def action_unfold(self, unfold: int) -> None:
        """Enter / → unfold the call at the cursor; ← folds it again (in a
        span tree: see :meth:`Folding.toggle`)."""
        if self.folding is None or not self.row_count:
            return
        here = self.index_at(self.cursor)
        go = self.folding.toggle(here, unfold=bool(unfold))
        if go is not None:
            self._show(self._folded(self._filtered), go)

    def set_differs(self, marks: frozenset[int]) -> None:
        """Compare mode: mark where A and B part (ledger indexes)."""
        if marks != self.differs:
            self.differs = marks
            self.rows_changed()

    def set_bookmarks(self, marks: frozenset[int]) -> None:
        """Mark the person's bookmarks (ledger indexes) in the gutter."""
        if marks != self.bookmarks:
            self.bookmarks = marks
            self.rows_changed()

    def set_marks(self, marks: frozenset[int]) -> None:
        """Mark these ledger indexes in the gutter (none: an empty set)."""
        if marks != self.marks:
            self.marks = marks
            self.rows_changed()

    # -- playback ---------------------------------------------------------
    def toggle_play(self) -> bool:
        """Play from the cursor at the recorded pace (from the start if at
        the end), or pause; True if now playing."""
        if self.playback.toggle():
            if self.cursor >= self.row_count - 1:
                self.move_to(0)
            self._schedule_play()
        elif self._play_timer is not None:
            self._play_timer.stop()
        return self.playback.playing

    def _schedule_play(self) -> None:
        now = after = None
        index = self.cursor_index
        if index is not None and self.cursor + 1 < self.row_count:
            now = self.source.row(index).ts
            after = self.source.row(self.index_at(self.cursor + 1)).ts
        self._play_timer = self.set_timer(self.playback.wait(now, after), self._play_tick)

    def _play_tick(self) -> None:
        if not self.playback.playing:
            return
        err = self.source.error_index()
        if self.cursor >= self.row_count - 1 or (err is not None and self.cursor_index == err):
            self.playback.stop()
            self.post_message(self.PlayStopped())
            return
        self.move_to(self.cursor + 1)
        self._schedule_play()

    # -- moves: steps, prefix 0, the tail ------------------------------------
    def step(self, delta: int) -> None:
        """``j`` / ``k``: one row on; from prefix 0 (shown above the first
        row), to event 1."""
        if self.before_first and delta > 0:
            self.show_initial(False)
            if self.row_count:
                self._post_moved(self.target_at(0))
        else:
            self.move_to(self.cursor + delta)

    def prefix_seq(self) -> int:
        """The prefix the cursor shows: 0 at the initial state (a line with
        no usable seq: the valid prefix)."""
        index = self.cursor_index
        if self.before_first or index is None:
            return 0
        seq = self.source.row(index).seq
        return seq if seq is not None else self.source.valid_count()

    def event_seq(self) -> int | None:
        """The seq of the event at the cursor (None at prefix 0 or a bad line)."""
        index = self.cursor_index
        return None if index is None or self.before_first else self.source.row(index).seq

    def page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * self.page_rows)

    def first(self) -> None:
        """``Home``: event 1 (from prefix 0, too)."""
        if self.before_first:
            self.step(1)
        else:
            self.move_to(0)

    def enter_initial(self) -> bool:
        """Show prefix 0: the cursor above the first row. False with no rows."""
        if not self.source.row_count():
            return False
        self.move_to(0)
        self._initial_after = self._moves  # moves still in flight are older
        self.show_initial(True)
        return True

    def ride_tail(self) -> None:
        """``End``: the last row, riding the tail while following."""
        self.tail.riding = True
        self.move_to(self.last_position())
        self.tail.ride(self.cursor)

    def rows_grew(self, *, shown: bool) -> bool:
        """Rows came (or changed): ride the tail if riding, show a first row
        once there is one (``shown``: a line view is shown). True if the
        cursor's row did not move and may itself have changed.

        Calls folded, a row can move (a span under its parent, come after
        it) or stand for more (a call's new events): the cursor stays on its
        row, and a row that now stands for more is shown again."""
        line = target = None
        if self.folding is not None and self.row_count:
            line, target = self.index_at(self.cursor), self.target_at(self.cursor)
        if self.folding is not None:  # calls grew, and new lines came
            self.shown_rows = self._folded(self._filtered)
            self._subtitle()  # spans may have come to nest
        self.rows_changed()
        ride = self.tail.rows_grew(
            cursor=self.cursor, following=self.following, rows=self.source.row_count()
        )
        if ride and self.row_count:
            last = self.last_position()
            self.tail.will_move(last, self.target_at(last), self.cursor)
            stays = last == self.cursor and target in (None, self.target_at(last))
            self.move_to(last, force=not stays)
            return stays
        if line is not None and self.folding is not None and self.row_count:
            return self._keep_row(line, target, shown=shown)
        if not shown and self.source.row_count():
            self.move_to(self.cursor, force=True)
            return False
        return True

    def _keep_row(self, line: int, target: int | None, *, shown: bool) -> bool:
        """The rows changed under the cursor, on ledger line ``line``'s row
        (standing for line ``target``): keep it there; True if what it
        stands for did not change (and a line view is ``shown``)."""
        assert self.folding is not None
        pos = self.position_of(self.folding.row_of(line))
        if pos is None:
            pos = self.cursor
        if self.target_at(pos) != target or not shown:
            self.move_to(pos, force=True)
            return False
        if pos != self.cursor:  # the same prefix: no move to tell
            self.set_reactive(Timeline.cursor, pos)
            self.refresh()
            self.changed()
            self.call_after_refresh(self._scroll_cursor_visible)
        return True

    def on_timeline_cursor_moved(self, message: CursorMoved) -> None:
        """Its own move, seen when the screen sees it: a move made before
        prefix 0 was shown goes no further; a later one leaves prefix 0 and tells the
        tail rider (a move made to ride, seen after more rows came, is not
        the person leaving the tail)."""
        if self.before_first:
            if message.serial <= self._initial_after:
                message.stop()
                return
            self.show_initial(False)
        at_tail = self.at_tail()
        rows = self.source.row_count()
        self.tail.moved(
            message.index, at_tail=at_tail, following=self.following, rows=rows, cursor=self.cursor
        )

    def _post_moved(self, index: int) -> None:
        self._moves += 1
        self.post_message(self.CursorMoved(index, self._moves))

    def show_initial(self, shown: bool) -> None:
        """Show prefix 0 (the initial state) above the first row, or stop."""
        self.before_first = shown
        self.border_title = "timeline · prefix 0: no event yet" if shown else "timeline"
        self.rows_changed()

    def rows_changed(self) -> None:
        """Row count or row looks changed (new lines, verdict, filter)."""
        self._generation += 1
        self._cache.clear()
        self.virtual_size = Size(self.size.width, self.row_count)
        self.refresh()
        self.changed()

    @property
    def generation(self) -> int:
        """Bumped whenever what rows look like changes."""
        return self._generation

    def move_to(self, position: int, *, force: bool = False) -> None:
        position = max(0, min(position, self.row_count - 1)) if self.row_count else 0
        if position == self.cursor and not force:
            return
        if position == self.cursor:
            self._scroll_cursor_visible()
            if self.row_count:
                self._post_moved(self.target_at(position))
            return
        self.cursor = position

    def move_to_nearest(self, index: int) -> None:
        """The first shown row at or after ledger line ``index`` (else the last)."""
        shown = self.shown_rows
        pos = index if shown is None else self._nearest(shown, index)
        self.move_to(min(pos, self.row_count - 1), force=True)

    def _nearest(self, shown: array[int], index: int) -> int:
        """The first shown row at or after line ``index`` (else the last)."""
        if self.folding is not None and self.folding.order is not None:  # a span tree
            after = self.folding.position_after(index)
            return len(shown) - 1 if after is None else after
        return min(bisect.bisect_left(shown, index), len(shown) - 1)

    def at_tail(self) -> bool:
        """The cursor is on the row of the last line (in a span tree, that
        is the row of the span it is in, not the last row)."""
        if self.folding is not None and self.folding.order is not None:
            return self.cursor == self.last_position()
        return self.cursor >= self.row_count - 1

    def last_position(self) -> int:
        """The row of the last line (in a span tree, not the last row)."""
        order = self.folding.order if self.folding is not None else None
        total = self.source.row_count()
        if order is None or not total or self.folding is None:
            return self.row_count - 1
        found = order.get(self.folding.row_of(total - 1))
        return self.row_count - 1 if found is None else found

    def move_to_index(self, index: int) -> bool:
        """Select ledger line ``index`` if it is visible (inside a folded
        call: the call is unfolded to show it)."""
        if self.folding is not None and self.folding.row_of(index) != index:
            self.folding.reveal(index)
            self._show(self._folded(self._filtered))
        pos = self.position_of(index)
        if pos is None:
            return False
        self.move_to(pos, force=True)
        return True

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()  # rows between old and new change from past to future
        self.changed()
        self._scroll_cursor_visible()
        # rows that just arrived, or a size not yet laid out, can clamp that
        # scroll: look again once the layout has caught up
        self.call_after_refresh(self._scroll_cursor_visible)
        if self.row_count:
            self._post_moved(self.target_at(new))

    def _scroll_cursor_visible(self) -> None:
        self.scroll_to_region(
            Region(0, self.cursor, 1, 1), animate=False, x_axis=False, immediate=True
        )

    @property
    def page_rows(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    # -- input ------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        position = offset.y + self.scroll_offset.y
        if 0 <= position < self.row_count:
            self.clicked = True  # a move the person made (the app reads and clears it)
            self.move_to(position, force=True)

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.size.width, self.row_count)
        self.call_after_refresh(self._scroll_cursor_visible)  # the cursor row stays on screen

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # -- drawing ------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        position = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        if position >= self.row_count:
            return Strip.blank(width, self.rich_style)
        index = self.index_at(position)
        cursor_index = self.cursor_index or 0
        relation = 0 if position == self.cursor else (-1 if index <= cursor_index else 1)
        if self.before_first:
            relation = 1  # prefix 0: every event is still to come
        key = (index, relation, self._generation, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._build(index, relation, width)
            self._cache[key] = strip
        return strip

    def _run_range(self) -> tuple[float | None, float | None]:
        """The run's first ``ts`` and the seconds to its last noted line's
        (the bars' scale): two rows read once per change of rows, whatever
        the run's length."""
        if self._range is not None and self._range[0] == self._generation:
            return self._range[1]
        first = self.source.first_ts()
        index = self.folding.index if self.folding is not None else None
        if first is None or index is None or not len(index):
            found: tuple[float | None, float | None] = (first, None)
        else:
            last = self.source.row(len(index) - 1).ts
            found = (first, last - first if last is not None else None)
        self._range = (self._generation, found)
        return found

    def _build(self, index: int, relation: int, width: int) -> Strip:
        gutter = Gutter(self.marks, self.bookmarks, self.differs)
        get = self.get_component_rich_style
        text = row_text(
            self.source, self.folding, gutter, index, relation, width, get, self._run_range
        )
        base = self.rich_style
        text.stylize_before(base)
        return Strip(text.render(self.app.console), text.cell_len).crop_extend(0, width, base)
