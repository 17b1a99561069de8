"""The overview strip beside the timeline: the whole run in the rows it has.

A column of two cells a row: how many events fell in that slice of the run
(by time; a bar of eighths) and its most pressing mark (✗ the error, ≠
where compared runs part, ! a warning, ◆ a bookmark, • a watched value's
change); the cursor's slice is lit. A click, or ``{`` / ``}`` in the
timeline, goes there. It reads what the timeline already holds and is drawn
in the same frame: its slices are found by bisection (see
:mod:`replay_tui.views.overview`).
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.strip import Strip
from textual.widget import Widget

from replay_tui.ui.keys import bindings_for
from replay_tui.ui.widgets.timeline import Timeline
from replay_tui.views.overview import Slice, SortedMarks, jump_line, slice_of, slices

BARS = " ▏▎▍▌▋▊▉█"
GLYPHS = {"error": "✗", "differs": "≠", "warning": "!", "bookmark": "◆", "watch": "•"}


class OverviewStrip(Widget):
    """Two cells a row: density and mark of one slice of the run."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "overview--cursor",
        "overview--density",
        "overview--error",
        "overview--warning",
        "overview--mark",
    }

    def __init__(self, timeline: Timeline, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline = timeline
        self._sorted = SortedMarks()
        self._kept: tuple[tuple[object, ...], list[Slice]] | None = None
        #: Rows drawn, by (row, lit), while the slices are kept.
        self._drawn: dict[tuple[int, bool], Strip] = {}
        self.tooltip = (
            "The whole run, a slice a row: the bar is how many events fell in its time, "
            "the mark its most pressing (✗ error, ≠ compared runs part, ! warning, "
            "◆ bookmark, • watched value changed); the cursor's slice is lit. "
            "Click to go there; } and { in the timeline step a slice."
        )

    def pieces(self) -> list[Slice]:
        """The slices for the rows the strip has now (kept until the run,
        its marks or the strip's height change)."""
        timeline = self.timeline
        source = timeline.source
        clock = source.clock()
        key = (
            timeline.generation,
            self.size.height,
            source.row_count(),
            len(clock) if clock is not None else 0,
        )
        if self._kept is not None and self._kept[0] == key:
            return self._kept[1]
        error = source.error_index()
        differs: frozenset[int] | set[int] = timeline.differs
        if source.difference_index is not None:
            differs = differs | {source.difference_index}
        marks = {
            "error": [error] if error is not None else [],
            "differs": self._sorted.get("differs", differs),
            "warning": self._sorted.get("warning", source.warning_indexes()),
            "bookmark": self._sorted.get("bookmark", timeline.bookmarks),
            "watch": self._sorted.get("watch", timeline.marks),
        }
        found = slices(self.size.height, source.row_count(), clock, marks)
        self._kept = (key, found)
        self._drawn.clear()
        return found

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        found = self.pieces()
        if y >= len(found):
            return Strip.blank(width, self.rich_style)
        piece = found[y]
        cursor = self.timeline.cursor_index
        here = cursor is not None and piece.lo <= cursor < piece.hi
        strip = self._drawn.get((y, here))
        if strip is None:
            strip = self._drawn[(y, here)] = self._draw(piece, here, width)
        return strip

    def _draw(self, piece: Slice, here: bool, width: int) -> Strip:
        base = self.rich_style
        get = self.get_component_rich_style
        mark = piece.mark
        styles = {"error": "overview--error", "warning": "overview--warning"}
        mark_style = get(styles.get(mark or "", "overview--mark"))
        segments = [
            Segment(BARS[piece.level], get("overview--density")),
            Segment(GLYPHS.get(mark or "", " "), mark_style),
        ]
        strip = Strip(segments, 2).crop_extend(0, width, base)
        if here:
            lit: Style = get("overview--cursor")
            strip = Strip(Segment.apply_style(iter(strip), post_style=lit), width)
        return strip.apply_style(base)

    def go_to_row(self, row: int, direction: int = 1) -> bool:
        """Put the timeline's cursor at the slice of ``row`` (or the nearest
        with an event that way); False if there is none."""
        line = jump_line(self.pieces(), row, direction)
        if line is None:
            return False
        self.timeline.clicked = True  # the person's move (the screen reads it)
        if not self.timeline.move_to_index(line) and self.timeline.row_count:
            # hidden by a filter: the nearest shown row after it
            self.timeline.move_to_nearest(line)
        return True

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn.clear()

    def on_click(self, event: events.Click) -> None:
        if 0 <= event.y < len(self.pieces()):
            self.go_to_row(event.y)


class TimelineBox(Horizontal):
    """The timeline and its overview strip, side by side; ``{`` / ``}``
    move a slice of the run back or on."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings_for("overview"))

    def __init__(self, timeline: Timeline) -> None:
        super().__init__(id="timeline-box")
        self.timeline = timeline
        self.strip = OverviewStrip(timeline, id="overview")
        timeline.changed = self.strip.refresh

    def compose(self) -> ComposeResult:
        yield self.timeline
        yield self.strip

    def action_slice(self, direction: int) -> None:
        found = self.strip.pieces()
        cursor = self.timeline.cursor_index
        row = slice_of(found, cursor) if cursor is not None else None
        if row is None:
            row = 0 if direction > 0 else len(found)
        else:
            row += direction
        if 0 <= row < len(found):
            self.strip.go_to_row(row, direction)
