"""``?``: the key help, every key and what it does."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class HelpScreen(ModalScreen[None]):
    """``?``: every key and what it does."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss(None)", "Close"),
    ]

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold #e5c890", no_wrap=True)
        table.add_column()
        for keys, what in self.rows:
            table.add_row(Text(keys), Text(what))
        # scrolls when the terminal is short (80x24): arrows, PgUp/PgDn, Home/End, wheel
        with VerticalScroll(classes="dialog help", id="help-body"):
            yield Label(Text("replay-tui keys", style="bold"))
            yield Static(table)
            yield Label(
                Text(
                    "Mouse: click a row. Ctrl+P: command palette (every action). Esc closes.",
                    style="dim",
                )
            )
