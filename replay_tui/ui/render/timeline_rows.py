"""A timeline row as inert ``rich.text.Text`` (Rich only, no Textual): the
gutter mark, seq, time since the first event, kind and call_id (or a span's
indented name and its bar over the run's time), what went wrong there, and
the one-line payload (or a folded call's summary)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rich.style import Style
from rich.text import Text

from replay_tui.engine.indexes.calls import CallIndex
from replay_tui.engine.indexes.clock import EventClock
from replay_tui.ui.render.call_rows import call_row_text
from replay_tui.ui.render.span_rows import kind_columns, span_bar, span_label_for, track_width
from replay_tui.views.calls import CallRow, Folding
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
    def call_index(self) -> CallIndex | None: ...
    def call_row(self, number: int) -> CallRow: ...
    def clock(self) -> EventClock | None: ...
    def resume_kept(self, index: int) -> bool: ...

    difference_index: int | None


@dataclass(frozen=True, slots=True)
class Gutter:
    """The marks the person and the app put on rows, by ledger index."""

    #: where a watched path changed (•)
    marks: frozenset[int]
    #: the person's bookmarks (◆)
    bookmarks: frozenset[int]
    #: compare mode: where A and B part (≠)
    differs: frozenset[int]


def folded_call(folding: Folding | None, index: int, error_index: int | None) -> int | None:
    """The folded call whose row ``index`` is (not the error's own row)."""
    if folding is None or index == error_index:
        return None
    return folding.folded_call(index)


def _span_cells(
    text: Text,
    source: RowSource,
    folding: Folding,
    number: int,
    call: CallRow,
    row: Row,
    style: Style,
    width: int,
    run_range: tuple[float | None, float | None],
) -> None:
    """A span's row in a tree: its name indented by its depth (▾ / ▸ if it
    has children), then its bar over the run's time range."""
    kind_width = source.columns()[0]
    label = span_label_for(folding, number, call, row, width - text.cell_len, kind_width)
    label.stylize(style)
    text.append_text(label)
    text.append(" ")
    track = track_width(width - text.cell_len)
    if track:
        first, run = run_range
        text.append_text(span_bar(call, first, run, track))
        text.append(" ")


def row_text(
    source: RowSource,
    folding: Folding | None,
    gutter: Gutter,
    index: int,
    relation: int,
    width: int,
    get: Callable[[str], Style],
    run_range: Callable[[], tuple[float | None, float | None]],
) -> Text:
    """Row ``index`` at ``width`` cells; ``relation`` is 0 at the cursor, -1
    before it, 1 after it (not yet happened); ``get`` gives a component's
    style by name (``timeline--cursor``, ...)."""
    row = source.row(index)
    error_index = source.error_index()
    total = max(source.row_count(), 1)
    seq_width = max(3, len(str(total)))
    first = source.first_ts()
    offset = format_offset(row.ts - first) if row.ts is not None and first is not None else ""
    failed = source.has_error()
    is_error = error_index is not None and (
        index == error_index or (folding is not None and folding.holds(index, error_index))
    )
    # an error with no line (bad_budget) stops replay before every line
    unreplayed = failed and (error_index is None or index > error_index)
    pending = not failed and index >= source.valid_count()

    is_pending = index == source.pending_index()
    if is_error:
        sign = "✗"
    elif index == source.difference_index or index in gutter.differs:
        sign = "≠"
    elif index in source.warning_indexes():
        sign = "!"
    else:
        sign = ""
    # a bookmark is the person's own mark: it keeps the gutter, and the
    # sign it covers moves into the row; a folded call's row shows the
    # bookmarks of the events folded into it
    bookmarked = index in gutter.bookmarks or (
        folding is not None and folding.holds_any(index, gutter.bookmarks)
    )
    in_row = sign if bookmarked else ""
    if relation == 0:
        marker = "▶"
    elif bookmarked:
        marker = "◆"
    elif sign:
        marker = sign
    elif index in gutter.marks:
        marker = "•"
    elif source.resume_kept(index):
        marker = "│"  # claude --resume loads it, where it would leave records out
    else:
        marker = " "
    seq = str(row.seq) if row.seq is not None else "?"
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    marker_style = get("timeline--error") if is_error else None
    if marker in ("•", "◆", "≠", "│"):
        marker_style = get("timeline--mark")
    text.append(f"{marker}", style=marker_style)
    text.append(f"{seq:>{seq_width}} ", style=get("timeline--seq"))
    text.append(f"{offset:>10} ", style=get("timeline--offset"))
    kind_style = FAMILY_STYLES.get(row.family, FAMILY_STYLES["other"])
    number = folded_call(folding, index, error_index)
    call = None if number is None else source.call_row(number)
    tree = call is not None and folding is not None and folding.tree
    if number is not None and call is not None and tree:
        assert folding is not None
        _span_cells(text, source, folding, number, call, row, kind_style, width, run_range())
    else:
        text.append_text(kind_columns(row, call, folding, source.columns(), kind_style))
    if in_row:
        text.append(f"{in_row} ", style=get("timeline--error") if is_error else None)
    if is_error:
        text.append(source.error_label(), style=get("timeline--error"))
        text.append("  ")
    elif unreplayed:
        text.append("not replayed  ", style=get("timeline--unreplayed"))
    elif row.problem:
        text.append(f"[{row.problem}] ", style=get("timeline--unreplayed"))
    elif is_pending:
        text.append("receipt pending  ", style=get("timeline--warning"))
    if index == source.difference_index:
        text.append("rules differ from here  ", style=get("timeline--warning"))
    if call is not None:
        name = not tree and not source.columns()[1]
        summary = get("timeline--summary")
        text.append_text(call_row_text(call, summary, name=name, arg=not tree))
    else:
        text.append(row.summary, style=get("timeline--summary"))
    text.truncate(width, overflow="ellipsis", pad=True)

    if relation == 0:
        text.stylize(get("timeline--cursor"))
    elif is_error:
        text.stylize(get("timeline--error"))
    elif relation > 0 or unreplayed or pending:
        text.stylize(get("timeline--future"))
    return text
