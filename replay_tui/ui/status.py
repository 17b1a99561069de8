"""The status line: the run's names, the verdict, compare mode, where the
cursor is, notes and questions, each piece from the controller that owns it.

:class:`StatusBar` draws it when Textual paints: anything may ask for a
refresh any number of times in a frame, and the line is composed once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from replay_tui.core.safe_text import clip, escape_controls

if TYPE_CHECKING:
    from replay_tui.ui.screen import ReplayScreen

#: A run_id cut to fit the header keeps at least this many characters.
MIN_RUN_ID = 12


class StatusBar(Widget):
    """One line (two with a banner), composed at paint time."""

    def __init__(self, compose_text: Callable[[], Text], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._compose_text = compose_text

    def render(self) -> Text:
        return self._compose_text()

    def changed(self) -> None:
        """Something it shows changed: composed again at the next paint (a
        banner may add its line, hence the layout)."""
        self.refresh(layout=True)


def status_text(screen: ReplayScreen) -> Text:
    """The whole status line for ``screen`` at its width."""
    session, cursor = screen.session, screen.cursor
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("  ")
    session.verdict(
        text, validating=screen.validating, error_waiting=cursor.error_waiting is not None
    )
    screen.compare.status(text)
    total = session.view.row_count()
    timeline = screen.timeline  # (messages still arrive while the app exits)
    index = timeline.cursor_index if total and timeline.is_attached else None
    _position(screen, text, index, total)
    _notes(screen, text, index)
    screen.search.condition_status(text, screen.timeline.prefix_seq())
    screen.watchlist.status(text)
    screen.timeline.playback.status(text)
    if screen.reveal:
        text.append("  secrets shown", style="bold #e78284")
    return _with_names(screen, text)


def _position(screen: ReplayScreen, text: Text, index: int | None, total: int) -> None:
    """Where the cursor is, and the state's word there."""
    view = screen.line_view
    if index is not None and screen.at_initial and view is not None:
        text.append(f"  initial state, prefix 0 of {total}  state ")
        text.append(escape_controls(view.summary or ""), style="bold #a6d189")
    elif index is not None:
        row = screen.session.view.row(index)
        if row.seq is not None:
            text.append(f"  seq {row.seq} of {total}")
        else:  # a line with no usable seq: say where it is
            text.append(f"  line {index + 1} of {total}")
        if view is not None and view.index == index and view.summary:
            if view.mode == "step":
                text.append("  state ")
                text.append(escape_controls(view.summary), style="bold #a6d189")
                for warning in view.warnings:
                    said = clip(f"{warning.code}: {warning.message}", 60)
                    text.append(f"  ⚠ {escape_controls(said)}", style="bold #e5c890")
            elif view.mode == "failed":
                text.append("  state before it ")
                text.append(escape_controls(view.summary), style="bold #e5c890")


def _notes(screen: ReplayScreen, text: Text, index: int | None) -> None:
    """New rows while following, rules notes, the filter, a bookmark."""
    session = screen.session
    if session.following:
        new_rows = screen.timeline.tail.unseen(session.view.row_count())
        if new_rows > 0:
            text.append(f"  +{new_rows} new events (End returns to the tail)", style="bold #81c8be")
    session.notes(text)
    screen.search.filter_status(text)
    at_initial = screen.at_initial
    here = session.view.row(index).seq if index is not None and not at_initial else None
    screen.marks.status(text, here)


def _with_names(screen: ReplayScreen, rest: Text) -> Text:
    """The run's label first, then its run_id and rules while they fit:
    the verdict, the position and the state's word matter more. A long
    run_id (a Temporal run's UUID) is cut before the rules go; the rules
    go before the run_id, which names the run in a ticket."""
    session = screen.session
    r = session.replay
    head = Text(" ")
    head.append(escape_controls(session.label), style="bold")
    room = screen.size.width - head.cell_len - rest.cell_len
    rules = f"  rules {r.reducer.name} {r.reducer.version}"
    run = escape_controls(r.run_id) if r.run_id else ""
    extras = ""
    for with_rules in (True, False):
        left = room - (len(rules) if with_rules else 0) - len("  run ")
        if not run or cell_len(run) <= left:
            extras = (f"  run {run}" if run else "") + (rules if with_rules else "")
        elif left >= MIN_RUN_ID:
            extras = f"  run {run[: left - 1]}…" + (rules if with_rules else "")
        else:
            continue
        if cell_len(extras) <= room:
            break
        extras = ""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append_text(head)
    text.append(extras, style="dim")
    text.append_text(rest)
    if session.banner:  # on a line of its own: it must be read whole
        text.append("\n ")
        text.append(escape_controls(session.banner), style="bold #e78284")
    return text
