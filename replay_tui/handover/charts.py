"""The report's charts: a watched value over seq, as plain data for the
templates.

The same series and bins as the app's watch pane (:mod:`replay_tui.views.chart`):
numbers as a step line with the lowest and highest value on a y-axis, other
values as bands, an object or list by its length. The HTML template draws an
inline SVG from the numbers here (coordinates, colours of its own choosing)
and the escaped strings (every label is run text made inert, masked as the
app masks it); the Markdown one says min, max and last, and where. Nothing
here is markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import MASK, escape_controls, is_secret_key
from replay_tui.engine.replay import Replay
from replay_tui.questions.across import LengthScan, iter_path_changes, shown_value
from replay_tui.questions.condition import (
    ABSENT,
    PathError,
    StatePath,
    format_path,
    lookup,
    parse_path,
)
from replay_tui.views.chart import (
    NONE,
    NUMBER,
    OBJECT,
    Series,
    band_key,
    band_order,
    column_of,
    column_starts,
    format_number,
    is_number,
    summarise,
)

#: The SVG's size and its plot's margins, in px.
WIDTH, HEIGHT, BAND_HEIGHT = 720, 170, 92
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 22, 24
#: Band fills, in the order values first appear from the left.
FILLS = ("#4c78a8", "#59a14f", "#edc948", "#b07aa1", "#76b7b2", "#f28e2b", "#ff9da7", "#9c755f")
LABEL = 40


class ChartSpec:
    """A path to chart, and whether by its length (``len(PATH)``)."""

    def __init__(self, path: StatePath, length: bool = False) -> None:
        self.path = path
        self.length = length

    @classmethod
    def parse(cls, text: str) -> ChartSpec:
        """``PATH`` or ``len(PATH)``, as ``--chart`` takes it."""
        body = text.strip()
        length = body.startswith("len(") and body.endswith(")")
        try:
            path = parse_path(body[4:-1] if length else body)
        except PathError as exc:
            raise CannotRun(f"--chart {text}: {exc}") from None
        return cls(path, length)


def value_label(value: Any, kind: str, limit: int, *, secret: bool, reveal: bool) -> str:
    """A value of a chart of ``kind`` in words, inert and masked (``secret``:
    the path's last key looks secret), as the app's chart and the report's say it."""
    if value is ABSENT:
        return "absent"
    if value is OBJECT:
        return "{…}"
    if secret:
        return MASK
    if kind == NUMBER and is_number(value):
        return format_number(float(value))
    return escape_controls(shown_value(value, limit, reveal=reveal))


def series_of(replay: Replay, spec: ChartSpec) -> tuple[Series, bool]:
    """The value at ``spec.path`` over the valid prefix, and whether it is
    its length (asked for, or an object or list at the end)."""
    until = replay.valid
    history = replay.history
    # an object or list is charted by its length (frozen: not copied to look)
    found = lookup(replay.frozen_at(until), spec.path) if history is not None else ABSENT
    length = spec.length or isinstance(found, (Mapping, list, tuple))
    if length and history is not None:
        scan = LengthScan(history, spec.path)
        series = Series(scan.value)
        series.extend(scan.advance(until))
        return series, True
    series = Series()
    first = True
    for change in iter_path_changes(replay, spec.path, until):
        if first:
            series = Series(change.old)
            first = False
        series.extend([(change.seq, change.new)])
    return series, False


def chart_docs(
    replay: Replay, specs: Iterable[ChartSpec], marks: list[int], reveal: bool
) -> list[dict[str, Any]]:
    """The report's charts, the report's ``marks`` (its chosen seqs) marked."""
    return [chart_doc(replay, spec, marks, reveal) for spec in specs]


def chart_doc(replay: Replay, spec: ChartSpec, marks: list[int], reveal: bool) -> dict[str, Any]:
    """One chart: its title, the words for Markdown, and the SVG's shapes."""
    series, length = series_of(replay, spec)
    where = escape_controls(format_path(spec.path))
    title = f"len({where})" if length else where
    secret = not reveal and any(isinstance(k, str) and is_secret_key(k) for k in spec.path)
    end = max(replay.valid, series.last_seq)

    def label(value: Any) -> str:
        return value_label(value, series.kind, LABEL, secret=secret, reveal=reveal)

    at = [f"{s}: {label(series.value_at(s))}" for s in marks if 0 <= s <= end]
    doc: dict[str, Any] = {
        "title": title,
        "kind": series.kind,
        "changes": len(series),
        "end": end,
        "words": _words(series, label),
        "at": at,
        "width": WIDTH,
    }
    if series.kind == NONE:
        doc["height"] = 0
        return doc
    if series.kind == NUMBER:
        doc.update(_number_shapes(series, end, marks))
    else:
        doc.update(_band_shapes(series, end, marks, label))
    return doc


def _words(series: Series, label: Any) -> str:
    """The Markdown's line: min, max and last and where, or the values in turn."""
    if series.kind == NONE:
        return "never changed"
    summary = summarise(series)
    count = f"{summary.changes:,} change" + ("" if summary.changes == 1 else "s")
    if series.kind == NUMBER:
        return (
            f"min {label(summary.lo)} at seq {summary.lo_seq}, max {label(summary.hi)} "
            f"at seq {summary.hi_seq}, last {label(summary.last)}; {count}"
        )
    spans = ", ".join(f"{seq}: {label(value)}" for seq, value in summary.spans)
    more = f", … ({summary.more_spans:,} more)" if summary.more_spans else ""
    return f"from seq {spans}{more}; {count}"


def _x(seq_col: int, columns: int) -> float:
    return round(LEFT + seq_col * (WIDTH - LEFT - RIGHT) / columns, 1)


def _marks(starts: list[int], marks: list[int], end: int) -> list[dict[str, Any]]:
    columns = len(starts)
    return [
        {"x": _x(column_of(starts, s), columns), "label": f"seq {s}"}
        for s in sorted(set(marks))
        if 0 <= s <= end
    ]


def _number_shapes(series: Series, end: int, marks: list[int]) -> dict[str, Any]:
    """A step line (each column from its lowest to its highest value, joined
    at its last), the y-axis's extremes and the x-axis's first and last seq."""
    columns = WIDTH - LEFT - RIGHT
    bins = series.number_bins(0, end + 1, columns)
    starts = [b.start for b in bins]
    lo, hi = series.extent() or (0.0, 0.0)
    bottom = HEIGHT - BOTTOM

    def y(value: float) -> float:
        if hi <= lo:
            return round((TOP + bottom) / 2, 1)
        return round(bottom - (value - lo) / (hi - lo) * (bottom - TOP), 1)

    parts: list[str] = []
    pen_down = False
    for i, item in enumerate(bins):
        if item.lo is None or item.hi is None or item.first is None or item.last is None:
            pen_down = False
            continue
        x = _x(i, columns)
        move = "L" if pen_down else "M"
        parts.append(
            f"{move}{x},{y(item.first)}L{x},{y(item.hi)}L{x},{y(item.lo)}L{x},{y(item.last)}"
        )
        pen_down = True
    return {
        "height": HEIGHT,
        "path": "".join(parts),
        "y_top": format_number(hi),
        "y_bottom": format_number(lo),
        "legend": [],
        "x_first": "0",
        "x_last": f"{end:,}",
        "marks": _marks(starts, marks, end),
        "plot": {"left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": bottom},
    }


def _band_shapes(series: Series, end: int, marks: list[int], label: Any) -> dict[str, Any]:
    """Rectangles of one value each (runs of columns merged), a fill and a
    letter per value, and the legend."""
    columns = (WIDTH - LEFT - RIGHT) // 2
    bins = series.band_bins(0, end + 1, columns)
    order = band_order(bins)
    fills = {band_key(v): FILLS[i % len(FILLS)] for i, v in enumerate(order)}
    letters = {band_key(v): chr(ord("a") + i % 26) for i, v in enumerate(order)}
    bands: list[dict[str, Any]] = []
    i = 0
    while i < len(bins):
        key = band_key(bins[i].value)
        j = i
        while j + 1 < len(bins) and band_key(bins[j + 1].value) == key:
            j += 1
        if bins[i].value is not ABSENT:
            x0, x1 = _x(i, columns), _x(j + 1, columns)
            bands.append(
                {
                    "x": x0,
                    "width": round(x1 - x0, 1),
                    "fill": fills[key],
                    "letter": letters[key] if x1 - x0 >= 12 else "",
                    "label": f"{label(bins[i].value)} (from seq {bins[i].start})",
                }
            )
        i = j + 1
    legend = [
        {"fill": fills[band_key(v)], "letter": letters[band_key(v)], "label": label(v)}
        for v in order
    ]
    starts = column_starts(0, end + 1, columns)
    return {
        "height": BAND_HEIGHT,
        "bands": bands,
        "legend": legend,
        "x_first": "0",
        "x_last": f"{end:,}",
        "marks": _marks(starts, marks, end),
        "plot": {"left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": TOP + 34},
    }
