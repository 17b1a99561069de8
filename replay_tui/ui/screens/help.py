"""``?``: the key help, every key and what it does."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from replay_tui.core import line_core


class HelpScreen(ModalScreen[None]):
    """``?``: every key and what it does."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss(None)", "Close"),
    ]

    def __init__(self, rows: list[tuple[str, str]], line_core: str | None = None) -> None:
        super().__init__()
        self.rows = rows
        #: Which path proved this history's lines (``native`` or ``python``).
        self.line_core = line_core

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
            if self.line_core is not None:
                yield Label(Text(self._line_core_words(), style="dim"))
            yield Static(table)
            yield Label(
                Text(
                    "Mouse: click a row. Ctrl+P: command palette (every action). Esc closes.",
                    style="dim",
                )
            )

    def _line_core_words(self) -> str:
        if self.line_core == "native":
            return "Lines proved by the native line core."
        if line_core.NATIVE is None:
            return (
                f"Lines proved in Python; the native line core is built by {line_core.BUILD_HINT}."
            )
        return "Lines proved in Python (the native line core reads envelope ledgers only)."
