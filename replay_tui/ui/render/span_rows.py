"""A span's row when calls folded nest (``v`` on a trace): its name indented
by its depth with a fold marker, and its bar over the run's time range, so
the rows read as a trace viewer's waterfall.

The bar's place comes from what the row already knows (its first event's
``ts`` and its duration, see :class:`~replay_tui.views.calls.CallRow`) and
the run's range (its first ``ts`` and the latest, from the event clock):
nothing is read to draw it. Names are data: escaped, and set as text.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from replay_tui.core.safe_text import escape_controls
from replay_tui.ui.render.call_rows import STATUS_STYLES
from replay_tui.views.calls import CallRow, Folding, bar_cells
from replay_tui.views.rows import Row

#: Cells a level of depth indents a name.
INDENT = 2
#: Cells of a name kept however deep its span (the indent stops there).
NAME_KEPT = 8
#: The narrowest bar track drawn (a row with less spare width draws none).
TRACK_MIN = 8
#: A span still running: its bar's last cell (drawn to the latest ts).
OPEN_END = "…"
MARKERS = {None: "  ", True: "▾ ", False: "▸ "}
#: The widest a span's name gets (the bar and the span's words take the rest).
NAME_MAX = 40


def kind_columns(
    row: Row, call: CallRow | None, folding: Folding | None, columns: tuple[int, int], style: Style
) -> Text:
    """The kind and call_id columns of a row: a folded call's ``▸`` and its
    tool; an unfolded call's events marked ``▾`` / ``│`` (indented by the
    call's depth where calls nest)."""
    kind_width, call_width = columns
    kind = row.kind or "—"
    if call is not None:
        kind = "▸ " + (escape_controls(call.tool) if call.tool else kind)
    elif folding is not None:
        kind = folding.sign(row.index) + kind
        number = folding.index.call_at(row.index)
        if folding.tree and number >= 0:
            kind = indent(folding.depth(number), kind_width) + kind
    kind = kind if len(kind) <= kind_width else kind[: kind_width - 1] + "…"
    text = Text(f"{kind:<{kind_width}} ", style=style, no_wrap=True, end="")
    if call_width:
        cid = row.call_id
        cid = cid if len(cid) <= call_width else cid[: call_width - 1] + "…"
        text.append(f"{cid:<{call_width}} ", style=style + Style(bold=False))
    return text


def span_label_for(
    folding: Folding, number: int, call: CallRow, row: Row, rest: int, kind_width: int
) -> Text:
    """Span ``number``'s name cell in a tree, out of ``rest`` cells left in
    the row: two fifths of them (at least the kind column, at most NAME_MAX)."""
    width = max(kind_width, min(NAME_MAX, rest * 2 // 5))
    opened = not folding.is_closed(number) if folding.has_children(number) else None
    return span_label(call, row.kind or "—", folding.depth(number), opened, width)


def indent(depth: int, width: int) -> str:
    """The indent of a row at ``depth`` in a column ``width`` cells wide."""
    return " " * min(depth * INDENT, max(0, width - NAME_KEPT))


def span_label(call: CallRow, kind: str, depth: int, opened: bool | None, width: int) -> Text:
    """``  ▾ invoke_agent billing``: indent, marker (None: no children, True:
    its children shown, False: folded into it), what it runs and its
    argument, cut to ``width`` cells."""
    name = escape_controls(call.tool) if call.tool else kind
    if call.arg:
        name += " " + escape_controls(call.arg)
    text = Text(indent(depth, width) + MARKERS[opened] + name, no_wrap=True, end="")
    text.truncate(width, overflow="ellipsis", pad=True)
    return text


def track_width(spare: int) -> int:
    """The bar track's width, out of the ``spare`` cells a row has after its
    name: two fifths of them (the rest says how the span went: its status,
    a model span's tokens, its time)."""
    return spare * 2 // 5 if spare >= 2 * TRACK_MIN else 0


def span_bar(call: CallRow, first_ts: float | None, run: float | None, width: int) -> Text:
    """The bar of ``call`` in a track ``width`` cells wide: its first event's
    ``ts`` to its last's, over the run's ``run`` seconds after ``first_ts``;
    a span still open is drawn to the latest ts, with an open end."""
    text = Text(no_wrap=True, end="")
    if width <= 0:
        return text
    if call.start_ts is None or first_ts is None or run is None:
        text.append(" " * width)
        return text
    still_open = call.status == "open"
    if run <= 0:  # the whole run at one instant: every span spans it
        start, end = 0.0, 1.0
    else:
        start = (call.start_ts - first_ts) / run
        took = call.duration if call.duration is not None else 0.0
        end = 1.0 if still_open else start + max(took, 0.0) / run
    a, b = bar_cells(start, end, width)
    style = STATUS_STYLES.get(call.status, Style()) + Style(bold=False, italic=False)
    text.append(" " * a)
    text.append("█" * (b - a - 1) + (OPEN_END if still_open else "█"), style=style)
    text.append(" " * (width - b))
    return text
