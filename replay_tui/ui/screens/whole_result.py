"""``o``: the receipt or recorded result at the cursor, whole, a screen at a time.

The receipt pane cuts long values (``x`` shows 20,000 characters of each); a
tool's output of many MB is read here instead. The rows are laid out in a
worker (:class:`~replay_tui.views.reader_text.ReaderText`) and drawn on the
Line API: only the rows on screen are ever made into text.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from replay_tui.core.safe_text import escape_controls
from replay_tui.views.reader_text import Cancelled, ReaderText

DIM = Style(dim=True)
TEXT = Style()
LAYOUT = Style(color="cyan")


class ReaderLines(ScrollView, can_focus=True):
    """The rows of a :class:`ReaderText`; arrows, PgUp/PgDn, Home/End scroll."""

    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False),
        Binding("k", "scroll_up", "Up", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "End", show=False),
        Binding("space", "page_down", "Page down", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="reader-lines")
        self.text: ReaderText | None = None

    # at once, not gliding through 180,000 rows
    def action_scroll_home(self) -> None:
        self.scroll_to(y=0, animate=False)

    def action_scroll_end(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def action_page_down(self) -> None:
        self.scroll_to(y=self.scroll_y + self.scrollable_content_region.height, animate=False)

    def action_page_up(self) -> None:
        self.scroll_to(y=self.scroll_y - self.scrollable_content_region.height, animate=False)

    def show(self, text: ReaderText) -> None:
        self.text = text
        self.virtual_size = Size(text.widest + 4, len(text))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = int(self.scroll_offset.y) + y
        if self.text is None or index >= len(self.text):
            return Strip.blank(width)
        row = self.text.row(index)
        if row.continued:  # the line above goes on here
            line = Text(" " * max(row.indent - 2, 0) + "↪ ", style=DIM)
        else:
            line = Text(" " * row.indent)
        line.append(row.text, style=TEXT if row.style == "text" else LAYOUT)
        x = int(self.scroll_offset.x)
        strip = Strip(line.render(self.app.console), line.cell_len)
        return strip.crop_extend(x, x + width, None)


class ReaderReady(Message):
    """The rows are laid out."""

    def __init__(self, text: ReaderText) -> None:
        super().__init__()
        self.text = text


class ResultReader(Screen[None]):
    """A value whole: its title, where the view is in it, and its rows."""

    BINDINGS = [
        Binding("escape,q,o", "app.pop_screen", "Back"),
    ]

    def __init__(self, title: str, value: Any) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self.lines = ReaderLines()
        #: For benchmarks and tests: the first rows are drawn; the view is at the end.
        self.first_page_shown = False

    def compose(self) -> ComposeResult:
        yield Static(Text(escape_controls(self._title), style="bold"), id="reader-title")
        yield Static(Text("laying out…", style=DIM), id="reader-where")
        yield self.lines
        yield Footer()

    def on_mount(self) -> None:
        self.lines.focus()
        self._lay_out()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _lay_out(self) -> None:
        worker = get_current_worker()
        try:
            text = ReaderText(self._value, cancelled=lambda: worker.is_cancelled)
        except Cancelled:
            return
        self.post_message(ReaderReady(text))

    def on_reader_ready(self, message: ReaderReady) -> None:
        self.lines.show(message.text)
        self._where()
        self.call_after_refresh(self._shown)
        self.lines.watch(self.lines, "scroll_y", lambda _: self._where(), init=False)

    def _shown(self) -> None:
        self.first_page_shown = True

    @property
    def at_end(self) -> bool:
        return self.first_page_shown and self.lines.scroll_y >= self.lines.max_scroll_y

    def _where(self) -> None:
        text = self.lines.text
        if text is None:
            return
        total = len(text)
        top = int(self.lines.scroll_y) + 1
        bottom = min(total, top + self.lines.scrollable_content_region.height - 1)
        said = Text(f"rows {top:,}-{bottom:,} of {total:,}", style=DIM)
        if text.longest_lines > 1:
            said.append(f" · the longest string has {text.longest_lines:,} lines", style=DIM)
        said.append("   ↑↓ PgUp PgDn Home End scroll · ←→ sideways · Esc back", style=DIM)
        self.query_one("#reader-where", Static).update(said)
