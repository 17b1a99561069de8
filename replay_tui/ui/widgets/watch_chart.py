"""The chart atop the watch pane: the watched value over seq, the cursor's
seq marked.

Numbers are drawn in Braille (two columns of four dots a cell), with the
highest and lowest value on a y-axis and the run's first and last seq under
it; anything else (a phase, a status) as bands, a colour and a letter per
value. An object or list is drawn by its length (``len(PATH)``, from a
:class:`~replay_tui.questions.across.LengthScan`). The bins come from
:mod:`replay_tui.views.chart` and are drawn once per (width, rows, changes,
run length): moving the cursor only moves the marker, one column cropped
into each cached row.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.strip import Strip

from replay_tui.core.safe_text import is_secret_key
from replay_tui.handover.charts import value_label
from replay_tui.questions.across import LengthScan, PathChange
from replay_tui.questions.condition import ABSENT, StatePath, lookup
from replay_tui.state.history import History
from replay_tui.views.chart import (
    NONE,
    NUMBER,
    BandBin,
    Chunk,
    Series,
    band_key,
    band_order,
    braille_rows,
    chunk_of,
    column_of,
    column_starts,
    format_number,
    spark_row,
)

LINE = Style(color="#8caaee")
AXIS = Style(color="#838ba7")
MARKER = Style(color="#f4b8e4", bold=True)
MARKER_CELL = Style(color="#f4b8e4", bgcolor="#51576d", bold=True)
#: Band colours, in the order values first appear from the left.
PALETTE = ("#8caaee", "#a6d189", "#e5c890", "#ca9ee6", "#81c8be", "#ef9f76", "#f4b8e4", "#99d1db")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: List rows the watch pane keeps below the chart.
LIST_ROWS = 3
#: Narrower than this, no chart.
MIN_WIDTH = 24
#: Characters of a band value in the legend and the header.
SHOWN = 24


class ChartFound(Message):
    """The scan's values for the chart (posted before its WatchFound).
    ``initial``: the value before the first change, for a new series."""

    def __init__(
        self,
        path: StatePath,
        chunk: Chunk,
        initial: Any,
        until: int,
        fresh: bool,
        length: bool,
        watch: int = 0,
    ) -> None:
        super().__init__()
        #: The watch it is for (see WatchFound).
        self.watch = watch
        #: The values are the length of an object or list at ``path``.
        self.length = length
        self.path = path
        self.chunk = chunk
        self.initial = initial
        self.until = until
        #: A new series (else later changes of the one shown: a run that grew).
        self.fresh = fresh


def is_container(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple))


def by_length(history: History | None, path: StatePath, until: int) -> bool:
    """Chart ``path`` by its length: an object or list there after ``until``
    events (and a patch log to count it from)."""
    return history is not None and is_container(lookup(history.state_at(until), path))


def changes_chunk(changes: Sequence[PathChange]) -> Chunk:
    """A batch of the watch's changes as the chart's values (the worker's work)."""
    return chunk_of((c.seq, c.new) for c in changes)


def length_batches(
    scan: LengthScan, until: int, cancelled: threading.Event, every: float = 0.1
) -> Iterator[Chunk]:
    """``len(PATH)``'s changes up to ``until`` in batches of ``every`` seconds."""
    batch: list[tuple[int, Any]] = []
    last = time.perf_counter()
    for pair in scan.advance(until, cancelled):
        batch.append(pair)
        now = time.perf_counter()
        if now - last > every:
            yield chunk_of(batch)
            batch, last = [], now
    yield chunk_of(batch)


@dataclass(frozen=True, slots=True)
class _Drawn:
    """The chart drawn for one key: its rows under the header, without the marker."""

    rows: list[Strip]
    roles: list[str]  # "plot", "axis" (marked with a caret) or "legend"
    starts: list[int]  # each bin's first seq
    per_cell: int  # bins a cell (Braille: 2)
    gutter: int  # cells left of the plot (y labels)


class WatchChart:
    """The chart's data and drawing; the watch pane owns one."""

    def __init__(self) -> None:
        self.series: Series | None = None
        self.end = 0
        self.shown = True
        #: Drawn by its length (an object or list): the header says ``len``.
        self.length = False
        self.reveal = False
        self.secret = False
        self._drawn: tuple[tuple[Any, ...], _Drawn] | None = None

    def reset(self, path: StatePath | None) -> None:
        self.series, self.end, self.length, self._drawn = None, 0, False, None
        self.secret = path is not None and any(
            isinstance(k, str) and is_secret_key(k) for k in path
        )

    def add(self, message: ChartFound) -> None:
        if message.fresh or self.series is None:
            self.series = Series(message.initial)
            self.length = message.length
        self.series.add(message.chunk)
        self.end = max(self.end, message.until, self.series.last_seq)

    @property
    def kind(self) -> str:
        return NONE if self.series is None else self.series.kind

    def rows_for(self, height: int, width: int) -> int:
        """Rows of the pane the chart takes (0: none), LIST_ROWS left for the list:
        a header, then (numbers) Braille and an axis, or (bands) bands and a legend;
        in a small pane one row of eighth blocks or of bands."""
        room = height - LIST_ROWS
        if not self.shown or self.kind == NONE or width < MIN_WIDTH or room < 2:
            return 0
        return min(room, 6 if self.kind == NUMBER else 4)

    # -- drawing ----------------------------------------------------------------
    def _label(self, value: Any) -> str:
        secret = self.secret and not self.reveal
        return value_label(value, self.kind, SHOWN, secret=secret, reveal=self.reveal)

    def header(self, seq: int, width: int) -> Text:
        """``seq 10: 2,538``: the value at the cursor, then what C does."""
        assert self.series is not None
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(f"seq {seq:,}", style=MARKER)
        name = "len " if self.length else ""
        text.append(f": {name}{self._label(self.series.value_at(seq))}", style="bold")
        text.append("   C hides the chart", style="dim")
        return text

    def _draw(self, body: int, width: int, console: Console, base: Style) -> _Drawn:
        """The rows under the header (``body`` of them), once per key."""
        series = self.series
        assert series is not None
        end = self.end + 1  # seqs 0..end

        def strip(text: Text) -> Strip:
            text.truncate(width, pad=True)
            return Strip(text.render(console), width).apply_style(base)

        if self.kind != NUMBER:
            starts = column_starts(0, end, width)
            bins = series.band_bins(0, end, width)
            order = band_order(bins)
            colours = {band_key(v): PALETTE[i % len(PALETTE)] for i, v in enumerate(order)}
            letters = {band_key(v): LETTERS[i % len(LETTERS)] for i, v in enumerate(order)}
            band = _band_text(bins, colours, letters)
            plots = max(1, body - 1)
            rows = [strip(band.copy()) for _ in range(plots)]
            roles = ["plot"] * plots
            if body >= 2:
                rows.append(strip(self._legend(order, colours, letters)))
                roles.append("legend")
            return _Drawn(rows, roles, starts, 1, 0)
        extent = series.extent() or (0.0, 0.0)
        top, bottom = format_number(extent[1]), format_number(extent[0])
        braille = body >= 3
        gutter = max(len(top), len(bottom)) + 1 if braille else 0
        cells = width - gutter
        per_cell = 2 if braille else 1
        starts = column_starts(0, end, cells * per_cell)
        numbers = series.number_bins(0, end, cells * per_cell)
        lines = braille_rows(numbers, body - 1, extent) if braille else [spark_row(numbers, extent)]
        rows = []
        for i, line in enumerate(lines):
            label = top if i == 0 else (bottom if i == len(lines) - 1 else "")
            text = Text(label.rjust(gutter - 1) + " " if gutter else "", style=AXIS)
            text.append(line, style=LINE)
            rows.append(strip(text))
        roles = ["plot"] * len(rows)
        if body >= 2:
            rows.append(strip(_axis(gutter, cells, end - 1)))
            roles.append("axis")
        return _Drawn(rows, roles, starts, per_cell, gutter)

    def _legend(self, order: list[Any], colours: dict[Any, str], letters: dict[Any, str]) -> Text:
        text = Text(no_wrap=True, end="")
        for value in order:
            key = band_key(value)
            text.append(f" {letters[key]} ", style=Style(color="#232634", bgcolor=colours[key]))
            text.append(f" {self._label(value)}  ")
        return text

    def line(self, y: int, rows: int, width: int, seq: int, console: Console, base: Style) -> Strip:
        """Row ``y`` of the chart's ``rows``, the cursor's ``seq`` marked."""
        if y == 0:
            text = self.header(seq, width)
            text.truncate(width, overflow="ellipsis", pad=True)
            return Strip(text.render(console), width).apply_style(base)
        assert self.series is not None
        key = (rows, width, len(self.series), self.end, base, self.reveal)
        if self._drawn is None or self._drawn[0] != key:
            self._drawn = (key, self._draw(rows - 1, width, console, base))
        drawn = self._drawn[1]
        index = y - 1
        if index >= len(drawn.rows):
            return Strip.blank(width, base)
        row, role = drawn.rows[index], drawn.roles[index]
        cell = drawn.gutter + column_of(drawn.starts, seq) // drawn.per_cell
        if role == "legend" or not 0 <= cell < width:
            return row
        return _mark(row, cell, width, plot=role == "plot", base=base)

    def seq_at(self, x: int) -> int | None:
        """The seq a click at column ``x`` of the chart stands for."""
        if self._drawn is None:
            return None
        drawn = self._drawn[1]
        at = (x - drawn.gutter) * drawn.per_cell
        if not 0 <= at < len(drawn.starts):
            return None
        return drawn.starts[at]


def _axis(gutter: int, cells: int, last: int) -> Text:
    """``seq 0`` under the plot's left edge, the run's last seq under its right."""
    right = f"{last:,}"
    text = Text(" " * gutter + "seq 0", style=AXIS)
    text.append(" " * max(1, cells - 5 - len(right)) + right, style=AXIS)
    return text


def _band_text(bins: Sequence[BandBin], colours: dict[Any, str], letters: dict[Any, str]) -> Text:
    """One row of bands, a cell a bin: the value's letter where a band of
    three cells or more starts, a shaded cell where a bin held more than one."""
    text = Text(no_wrap=True, end="")
    keys = [band_key(b.value) for b in bins]
    for i, item in enumerate(bins):
        key = keys[i]
        if item.value is ABSENT:
            text.append("·", style="dim")
            continue
        colour = colours[key]
        starts = i == 0 or keys[i - 1] != key
        if starts and keys[i : i + 3] == [key] * 3:
            text.append(letters[key], style=Style(color="#232634", bgcolor=colour, bold=True))
        elif item.mixed and not starts:
            text.append("▒", style=Style(color=colour))
        else:
            text.append(" ", style=Style(bgcolor=colour))
    return text


def _mark(row: Strip, cell: int, width: int, *, plot: bool, base: Style) -> Strip:
    """``row`` with the cursor's column marked: lit, a bar where it is blank
    (the axis: a caret)."""
    left, middle, right = row.divide([cell, cell + 1, width])
    char = middle.text or " "
    if plot:
        marked = Strip([Segment("│" if char == " " else char, base + MARKER_CELL)], 1)
    else:
        marked = Strip([Segment("▲", base + MARKER)], 1)
    return Strip.join([left, marked, right])
