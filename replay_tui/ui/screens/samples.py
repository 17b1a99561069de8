"""``replay-tui LOG`` for an Inspect AI log of several samples: its samples
in a list to pick from (id, epoch, score, tokens, error). Enter opens the one
under the cursor in the app (as ``replay-tui LOG --sample ID:EPOCH``); quitting
the app comes back to the list; ``/`` filters it, q quits."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Input, Static

from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.ui.screens.filtered_list import FilteredListApp
from replay_tui.views.inspect_samples import SampleRow, log_totals, sample_rows

HELP = "  Enter open (q there comes back here)   / filter   Esc clear the filter   q quit"
COLUMNS = (("id", 24), ("epoch", 6), ("score", 24), ("tokens", 10), ("error", 0))


def row_cells(row: SampleRow) -> list[Text]:
    """One sample's row, every text inert."""
    error = Text(escape_controls(row.error), style="bold #e78284") if row.error else Text("")
    return [
        Text(escape_controls(row.id)),
        Text(str(row.epoch), justify="right"),
        Text(escape_controls(row.score)),
        Text(f"{row.total:,}", justify="right"),
        error,
    ]


class SamplesApp(FilteredListApp[str | None]):
    """The samples of one log; its result is the ``ID:EPOCH`` picked (None: quit)."""

    TITLE = "replay-tui"

    def __init__(self, path: Path, *, at: str | None = None, filter_text: str = "") -> None:
        super().__init__(filter_text)
        self.path = path
        self.rows = sample_rows(path)
        self._at = at

    def compose(self) -> ComposeResult:
        yield Static(id="where")
        yield DataTable(id="samples", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="filter: id, score, error", id="filter")
        yield Static(HELP, id="help")

    def on_mount(self) -> None:
        self.sub_title = self.path.name
        self._show_filter()
        self._show()
        if self._at is not None and self._at in self.table.rows:
            self.table.move_cursor(row=self.table.get_row_index(self._at))
        self.table.focus()

    def matches(self, row: SampleRow) -> bool:
        text = f"{row.id} {row.epoch} {row.score} {row.error}".lower()
        return all(w in text for w in self.filter_text.lower().split())

    def _show(self) -> None:
        table = self.table
        table.clear(columns=True)
        for title, cells in COLUMNS:
            table.add_column(title, key=title, width=cells or None)
        for row in self.rows:
            if self.matches(row):
                table.add_row(*row_cells(row), key=row.key)
        total, _ = log_totals(self.rows)
        errors = sum(1 for r in self.rows if r.error)
        said = (
            f" {self.path.name}: {plural(len(self.rows), 'sample')}, "
            f"{total.get('total_tokens', 0):,} tokens"
        )
        if errors:
            said += f", {errors} with an error or limit"
        if self.filter_text:
            said = f" {table.row_count} of {len(self.rows)} match {self.filter_text!r} ·" + said
        self.query_one("#where", Static).update(Text(escape_controls(said)))

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.exit(event.row_key.value)


def pick_sample(
    path: Path, *, at: str | None = None, filter_text: str = ""
) -> tuple[str | None, str]:
    """Run the list in this terminal: (the sample picked or None, the filter typed)."""
    app = SamplesApp(path, at=at, filter_text=filter_text)
    return app.run(), app.filter_text
