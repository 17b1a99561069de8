"""Modal screens: go to seq, filter, and the key help."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class GotoScreen(ModalScreen[int | None]):
    """``:`` asks for a seq number."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, last_seq: int) -> None:
        super().__init__()
        self.last_seq = last_seq

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(f"Go to seq (1..{self.last_seq}; 0: the initial state)"))
            yield Input(placeholder="seq", type="integer", id="goto-input")

    @on(Input.Submitted, "#goto-input")
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        self.dismiss(int(value) if value.lstrip("-").isdigit() else None)


class FilterScreen(ModalScreen[str | None]):
    """``/`` asks for text to keep rows by (kind, call_id or payload text)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Filter rows by kind, call_id or text (empty: show all)"))
            yield Input(
                value=self.current, placeholder="e.g. tool_denied or call-002", id="filter-input"
            )

    @on(Input.Submitted, "#filter-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)


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
