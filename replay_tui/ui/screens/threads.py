"""``replay-tui DB`` on a LangGraph checkpointer's database with several
threads: its threads in a list to pick from, as the sessions list is. Each
thread's row (id, checkpoints, last step, last written, status, forks) has
its forks and subgraphs beneath it (``↳ fork from step N``, ``↳ subgraph
NS``); Enter opens the row under the cursor in the app (a fork, a subgraph
as a run of its own), q quits.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.formats.langgraph.listing import ThreadRow, shown
from replay_tui.formats.langgraph.source import Database
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app

COLUMNS = (
    ("thread", 0),
    ("checkpoints", 11),
    ("last step", 9),
    ("last written", 19),
    ("status", 11),
    ("forks", 5),
)
HELP = "  Enter open (q there comes back here)   q quit"
_STATUS_STYLE = {"failed": "bold #e78284", "interrupted": "bold #e5c890", "done": "#a6d189"}


def row_cells(row: ThreadRow) -> list[Text]:
    """One thread's row: every text made inert, never markup."""
    return [
        Text(escape_controls(row.thread_id)),
        Text(f"{row.checkpoints:,}", justify="right"),
        Text(str(row.last_step), justify="right"),
        Text(row.last_ts[:19].replace("T", " ")),
        Text(row.status, style=_STATUS_STYLE.get(row.status, "")),
        Text(str(len(row.forks)) if row.forks else "", justify="right"),
    ]


class ThreadsApp(App[str | None]):
    """A database's threads and their forks; its result is the RUN picked
    (``DB#thread=ID``, a fork's with ``&tip=``), None on q."""

    TITLE = "replay-tui threads"
    CSS = """
    #where { height: 1; background: $panel; color: $text; }
    #threads { height: 1fr; }
    #help { height: 1; background: $panel; color: $text-muted; }
    """
    BINDINGS = [Binding("q", "quit", "quit")]

    def __init__(self, database: Database, rows: list[ThreadRow], *, at: str | None = None) -> None:
        super().__init__()
        self.database = database
        self.rows = rows
        self._at = at
        #: The RUN of each table row, by its key.
        self.runs: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="where")
        yield DataTable(id="threads", cursor_type="row", zebra_stripes=True)
        yield Static(HELP, id="help")

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#threads", DataTable)

    def on_mount(self) -> None:
        table = self.table
        wide = max(12, self.size.width - sum(w + 2 for _, w in COLUMNS[1:]) - 4)
        for title, width in COLUMNS:
            table.add_column(title, key=title, width=width or wide)
        for row in self.rows:
            key = str(len(self.runs))
            self.runs[key] = row.run
            table.add_row(*row_cells(row), key=key)
            for fork in [*row.forks, *row.subgraphs]:
                key = str(len(self.runs))
                self.runs[key] = fork.run
                cell = Text(f"  ↳ {escape_controls(fork.label)}", style="dim")
                table.add_row(cell, *[Text("")] * 5, key=key)
        if self._at is not None:
            keys = [k for k, run in self.runs.items() if run == self._at]
            if keys:
                table.move_cursor(row=table.get_row_index(keys[0]))
        name = Path(self.database).name if isinstance(self.database, Path) else shown(self.database)
        said = f" {name}: {plural(len(self.rows), 'thread')}, newest first"
        if not self.rows:
            said += " (a LangGraph checkpointer's database with no thread yet)"
        self.query_one("#where", Static).update(Text(escape_controls(said)))
        table.focus()

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is not None:
            self.exit(self.runs[key])


def app_for_thread(run: str) -> ReplayApp:
    """The app on a thread (or fork) picked, as ``replay-tui open RUN`` makes it."""
    return make_app(run)
