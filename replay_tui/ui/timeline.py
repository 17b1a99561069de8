"""The timeline: one row per ledger line, on Textual's Line API.

No widget per event: :meth:`Timeline.render_line` builds only the rows on
screen, from a bounded LRU of rendered strips, so a million rows scroll like
fourteen. The cursor row is the current prefix; rows after it are dimmed
("not yet happened"), the failing row is red, rows after it "not replayed".
"""

from __future__ import annotations

import bisect
from array import array
from typing import Protocol

from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from replay_tui.views.rows import Row, format_offset

FAMILY_STYLES = {
    "run": Style(color="#8caaee", bold=True),
    "model": Style(color="#ca9ee6"),
    "tool": Style(color="#81c8be"),
    "check": Style(color="#e5c890"),
    "state": Style(color="#a6d189"),
    "other": Style(color="#c6d0f5"),
}


class RowSource(Protocol):
    """What the timeline needs to know about the run (the app provides it)."""

    def row_count(self) -> int: ...
    def row(self, index: int) -> Row: ...
    def first_ts(self) -> float | None: ...
    def valid_count(self) -> int: ...
    def error_index(self) -> int | None: ...
    def error_label(self) -> str: ...
    def has_error(self) -> bool: ...
    def warning_indexes(self) -> frozenset[int]: ...
    def pending_index(self) -> int | None: ...
    def columns(self) -> tuple[int, int]: ...

    difference_index: int | None


class Timeline(ScrollView, can_focus=True, inherit_bindings=False):
    """Virtual list of rows; ``cursor`` is a position among the visible rows."""

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

    class CursorMoved(Message):
        """The selected row changed; ``index`` is the ledger line index."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, source: RowSource, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        #: Ledger indexes of the visible rows, or None for all rows.
        self.shown_rows: array[int] | None = None
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
        pos = bisect.bisect_left(self.shown_rows, index)
        return pos if pos < len(self.shown_rows) and self.shown_rows[pos] == index else None

    @property
    def cursor_index(self) -> int | None:
        return self.index_at(self.cursor) if self.row_count else None

    def show_only(self, shown: array[int] | None) -> None:
        """Show only these ledger indexes (a filter); the cursor stays on its row
        if it is shown, else moves to the next shown row."""
        current = self.cursor_index
        self.shown_rows = shown
        self.rows_changed()
        if current is not None:
            pos = self.position_of(current)
            if pos is None and shown is not None and len(shown):
                pos = min(bisect.bisect_left(shown, current), len(shown) - 1)
            self.move_to(pos or 0, force=True)
            # the new virtual size is applied on the next layout: scroll after it
            self.call_after_refresh(self._scroll_cursor_visible)

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

    def rows_changed(self) -> None:
        """Row count or row looks changed (new lines, verdict, filter)."""
        self._generation += 1
        self._cache.clear()
        self.virtual_size = Size(self.size.width, self.row_count)
        self.refresh()

    def move_to(self, position: int, *, force: bool = False) -> None:
        position = max(0, min(position, self.row_count - 1)) if self.row_count else 0
        if position == self.cursor and not force:
            return
        if position == self.cursor:
            self._scroll_cursor_visible()
            if self.row_count:
                self.post_message(self.CursorMoved(self.index_at(position)))
            return
        self.cursor = position

    def move_to_index(self, index: int) -> bool:
        """Select ledger line ``index`` if it is visible."""
        pos = self.position_of(index)
        if pos is None:
            return False
        self.move_to(pos, force=True)
        return True

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()  # rows between old and new change from past to future
        self._scroll_cursor_visible()
        # rows that just arrived, or a size not yet laid out, can clamp that
        # scroll: look again once the layout has caught up
        self.call_after_refresh(self._scroll_cursor_visible)
        if self.row_count:
            self.post_message(self.CursorMoved(self.index_at(new)))

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
        relation = 0 if index == cursor_index else (-1 if index < cursor_index else 1)
        if self.before_first:
            relation = 1  # prefix 0: every event is still to come
        key = (index, relation, self._generation, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._build(index, relation, width)
            self._cache[key] = strip
        return strip

    def _build(self, index: int, relation: int, width: int) -> Strip:
        row = self.source.row(index)
        error_index = self.source.error_index()
        get = self.get_component_rich_style
        base = self.rich_style
        total = max(self.source.row_count(), 1)
        seq_width = max(3, len(str(total)))
        first = self.source.first_ts()
        offset = format_offset(row.ts - first) if row.ts is not None and first is not None else ""
        failed = self.source.has_error()
        is_error = error_index is not None and index == error_index
        # an error with no line (bad_budget) stops replay before every line
        unreplayed = failed and (error_index is None or index > error_index)
        pending = not failed and index >= self.source.valid_count()

        is_pending = index == self.source.pending_index()
        if is_error:
            sign = "✗"
        elif index == self.source.difference_index or index in self.differs:
            sign = "≠"
        elif index in self.source.warning_indexes():
            sign = "!"
        else:
            sign = ""
        # a bookmark is the person's own mark: it keeps the gutter, and the
        # sign it covers moves into the row
        bookmarked = index in self.bookmarks
        in_row = sign if bookmarked else ""
        if relation == 0:
            marker = "▶"
        elif bookmarked:
            marker = "◆"
        elif sign:
            marker = sign
        elif index in self.marks:
            marker = "•"
        else:
            marker = " "
        seq = str(row.seq) if row.seq is not None else "?"
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        marker_style = get("timeline--error") if is_error else None
        if marker in ("•", "◆", "≠"):
            marker_style = get("timeline--mark")
        text.append(f"{marker}", style=marker_style)
        text.append(f"{seq:>{seq_width}} ", style=get("timeline--seq"))
        text.append(f"{offset:>10} ", style=get("timeline--offset"))
        kind_style = FAMILY_STYLES.get(row.family, FAMILY_STYLES["other"])
        kind_width, call_width = self.source.columns()
        kind = row.kind or "—"
        kind = kind if len(kind) <= kind_width else kind[: kind_width - 1] + "…"
        text.append(f"{kind:<{kind_width}} ", style=kind_style)
        if call_width:
            cid = row.call_id
            cid = cid if len(cid) <= call_width else cid[: call_width - 1] + "…"
            text.append(f"{cid:<{call_width}} ", style=kind_style + Style(bold=False))
        if in_row:
            text.append(f"{in_row} ", style=get("timeline--error") if is_error else None)
        if is_error:
            text.append(self.source.error_label(), style=get("timeline--error"))
            text.append("  ")
        elif unreplayed:
            text.append("not replayed  ", style=get("timeline--unreplayed"))
        elif row.problem:
            text.append(f"[{row.problem}] ", style=get("timeline--unreplayed"))
        elif is_pending:
            text.append("receipt pending  ", style=get("timeline--warning"))
        if index == self.source.difference_index:
            text.append("rules differ from here  ", style=get("timeline--warning"))
        text.append(row.summary, style=get("timeline--summary"))
        text.truncate(width, overflow="ellipsis", pad=True)

        if relation == 0:
            text.stylize(get("timeline--cursor"))
        elif is_error:
            text.stylize(get("timeline--error"))
        elif relation > 0 or unreplayed or pending:
            text.stylize(get("timeline--future"))
        text.stylize_before(base)
        return Strip(text.render(self.app.console), text.cell_len).crop_extend(0, width, base)
