"""What the two pickers (``replay-tui sessions``, an Inspect log's samples)
share: a list in a terminal of its own, a line saying where it is, a filter
field (``/`` shows it, Esc clears it, Enter goes back to the list) and a
line of keys. Each picker says what its rows are (:meth:`FilteredListApp._show`)."""

from __future__ import annotations

from typing import TypeVar

from rich.text import Text
from textual import on
from textual.app import App
from textual.binding import Binding
from textual.widgets import DataTable, Input

ResultT = TypeVar("ResultT")


class FilteredListApp(App[ResultT]):
    """A list to pick from, with a filter; the rows are the subclass's."""

    CSS = """
    #where { height: 1; background: $panel; color: $text; }
    DataTable { height: 1fr; }
    #filter { display: none; }
    #filter.-shown { display: block; }
    #help { height: 1; background: $panel; color: $text-muted; }
    """
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("slash", "filter", "filter"),
        Binding("escape", "clear_filter", "clear the filter", show=False),
    ]

    def __init__(self, filter_text: str = "") -> None:
        super().__init__()
        #: What the filter field holds (the list shows the rows that match it).
        self.filter_text = filter_text

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one(DataTable)

    def _show(self) -> None:
        """Fill the table with the rows that match :attr:`filter_text`."""
        raise NotImplementedError

    def _show_filter(self) -> None:
        """The filter given when the list was made, in its field (shown)."""
        if self.filter_text:
            field = self.query_one("#filter", Input)
            field.value = self.filter_text
            field.add_class("-shown")

    def action_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.add_class("-shown")
        field.focus()

    def action_clear_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.remove_class("-shown")
        if field.value:
            field.value = ""  # Changed: shown again without a filter
        self.table.focus()

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self._show()

    @on(Input.Submitted, "#filter")
    def _filtered(self) -> None:
        self.table.focus()
