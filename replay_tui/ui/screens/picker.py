"""``replay-tui sessions`` on a terminal: the agent sessions of this machine
in a list to pick from. Enter opens the one under the cursor in the app (as
``replay-tui open PATH``, following it if it is still being written), ``/``
filters the list by text, q quits.

The list shows at once from what a stat of each file says (newest first);
a worker then reads each one's first records and counts its lines
(:func:`~replay_tui.formats.session_stores.listing.describe`) and fills in its row.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import ColumnKey, RowKey
from textual.worker import get_current_worker

from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import byte_size, plural
from replay_tui.formats.session_stores.counts import RecordCounts
from replay_tui.formats.session_stores.listing import (
    Listing,
    StoredSession,
    clip_start,
    describe,
    home_short,
    is_live,
)
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.screens.filtered_list import FilteredListApp

#: The columns, in order: (key, title, cells; the last two's fit the screen).
COLUMNS = (
    ("modified", "modified", 21),
    ("source", "source", 11),
    ("records", "records", 9),
    ("size", "size", 10),
    ("project", "project", 0),
    ("prompt", "first prompt", 0),
)
#: Below this many cells the first prompt (what a person knows a session
#: by) needs the room: records and size go, the year goes from the date.
NARROW = 120
NARROW_COLUMNS = (
    ("modified", "modified", 16),
    ("source", "source", 11),
    ("project", "project", 0),
    ("prompt", "first prompt", 0),
)


def columns(narrow: bool) -> tuple[tuple[str, str, int], ...]:
    return NARROW_COLUMNS if narrow else COLUMNS


def _fixed(narrow: bool) -> int:
    """Cells the columns take but the project's and the first prompt's (with every padding)."""
    return sum(cells + 2 for _, _, cells in columns(narrow))


#: Seconds between two batches of rows filled in.
BATCH_SECONDS = 0.1
HELP = "  Enter open (q there comes back here)   / filter   Esc clear the filter   q quit"


def widths(cells: int) -> tuple[int, int, bool]:
    """(project, first prompt, narrow) on a screen ``cells`` wide: the first
    prompt gets the most, the project a quarter of the rest (10 to 36);
    narrow (below :data:`NARROW`), the columns of :data:`NARROW_COLUMNS`."""
    narrow = cells < NARROW
    room = max(0, cells - _fixed(narrow))
    project = min(36, max(10, room // 4))
    return project, max(20, room - project - 2), narrow  # and the scroll bar


def row_cells(
    session: StoredSession, project: int = 36, prompt: int = 120, narrow: bool = False
) -> list[Text]:
    """One session's row, its project and first prompt cut to ``project``
    and ``prompt`` cells (``narrow``: without records and size): every text
    made inert, never markup."""
    when = Text(
        datetime.fromtimestamp(session.mtime).strftime(
            "%m-%d %H:%M" if narrow else "%Y-%m-%d %H:%M"
        )
    )
    if session.live:
        when.append(" live", style="bold #81c8be")
    waiting = not session.described
    if session.records is not None:
        records = f"{session.records:,}"
    else:
        records = "" if session.problem is not None and session.described else "…"
    if session.problem is not None:
        said = Text(f"⚠ {escape_controls(session.problem)}", style="bold #e5c890")
    elif waiting:
        said = Text("…", style="dim")
    else:
        said = Text(session.first_prompt or "(no prompt)")
    said.truncate(prompt, overflow="ellipsis")
    where = Text(clip_start(escape_controls(home_short(session.project or "")), project))
    if narrow:
        return [when, Text(session.source), where, said]
    return [
        when,
        Text(session.source),
        Text(records, justify="right"),
        Text(byte_size(session.size), justify="right"),
        where,
        said,
    ]


class SessionsApp(FilteredListApp[Path | None]):
    """The sessions of a :class:`Listing` to pick from; its result is the
    path picked (None: quit)."""

    TITLE = "replay-tui sessions"

    def __init__(
        self,
        listing: Listing,
        *,
        at: Path | None = None,
        known: dict[Path, StoredSession] | None = None,
        filter_text: str = "",
    ) -> None:
        super().__init__(filter_text)
        self.listing = listing
        #: Sessions described before (the list shown again after one was
        #: opened): one whose size and mtime are as they were is not read again.
        self.known: dict[Path, StoredSession] = {} if known is None else known
        #: The sessions, in the listing's order (described as the worker goes).
        self.sessions: list[StoredSession] = [self._as_known(s) for s in listing.sessions]
        #: The session to put the cursor on when the rows come (the one opened).
        self._at = at
        #: Records counted in earlier runs, for files unchanged since.
        self.counts = RecordCounts()
        self.done = 0
        self._columns: list[ColumnKey] = []
        self._widths = widths(0)
        self._looked_in = listing.looked_in()

    def compose(self) -> ComposeResult:
        yield Static(id="where")
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="filter: project, prompt, path, source", id="filter")
        yield Static(HELP, id="help")

    def _as_known(self, session: StoredSession) -> StoredSession:
        seen = self.known.get(session.path)
        if seen is not None and (seen.size, seen.mtime) == (session.size, session.mtime):
            return replace(seen, live=session.live)
        return session

    def on_mount(self) -> None:
        self._widths = widths(self.size.width)
        self._show_filter()
        self._show()
        if self._at is not None:
            keys = [str(i) for i, s in enumerate(self.sessions) if s.path == self._at]
            if keys and keys[0] in self.table.rows:
                self.table.move_cursor(row=self.table.get_row_index(keys[0]))
        self.table.focus()
        self._describe_all()

    def on_resize(self, event: events.Resize) -> None:
        if widths(event.size.width) != self._widths:
            self._widths = widths(event.size.width)
            self._show()  # the first prompts cut again, to fit

    # -- what is shown -----------------------------------------------------------

    def matches(self, session: StoredSession) -> bool:
        words = self.filter_text.lower().split()
        text = session.text()
        return all(w in text for w in words)

    def _show(self) -> None:
        """The rows again (a new filter): the cursor stays on its session if shown."""
        table = self.table
        keep = None
        if table.row_count:
            keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        table.clear(columns=True)  # columns only grow: made again for these rows
        project, prompt, narrow = self._widths
        shown = columns(narrow)
        fitted = (*(cells for _, _, cells in shown[:-2]), project, prompt)
        self._columns = [
            table.add_column(title, key=key, width=cells)
            for (key, title, _), cells in zip(shown, fitted, strict=True)
        ]
        for index, session in enumerate(self.sessions):
            if self.matches(session):
                table.add_row(*row_cells(session, *self._widths), key=str(index))
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))
        self._where()

    def _where(self) -> None:
        listing = self.listing
        total = len(self.sessions)
        said = f" {plural(total, 'session')}, newest first"
        if listing.total > total:
            said += f" (the newest {total} of {listing.total})"
        said += f" · looked in {self._looked_in}"
        if self.filter_text:
            said = f" {self.table.row_count} of {total} match {self.filter_text!r} ·" + said
        if self.done < total:
            said += f" · counting records: {self.done} of {total}…"
        self.query_one("#where", Static).update(Text(escape_controls(said)))

    # -- reading them ------------------------------------------------------------

    @work(thread=True, exclusive=True, group="describe", exit_on_error=False)
    def _describe_all(self) -> None:
        """Each one's first records (quick), then each one's records counted
        (every byte read), the rows filled in as they are known."""
        worker = get_current_worker()
        batch: list[tuple[int, StoredSession, bool]] = []
        sent = time.monotonic()
        for count in (False, True):
            for index, session in enumerate(list(self.sessions)):
                if worker.is_cancelled:
                    return
                if session.described and (session.records is not None or not count):
                    described = session  # read before, and unchanged since
                else:
                    described = describe(
                        session,
                        cancelled=lambda: worker.is_cancelled,
                        records=count,
                        counts=self.counts,
                    )
                batch.append((index, described, count))
                if time.monotonic() - sent >= BATCH_SECONDS:
                    if worker.is_cancelled:
                        return
                    self.call_from_thread(self._described, batch)
                    batch, sent = [], time.monotonic()
        if batch and not worker.is_cancelled:
            self.call_from_thread(self._described, batch)
        self.counts.save()

    def _described(self, batch: list[tuple[int, StoredSession, bool]]) -> None:
        """Rows filled in: their cells, or the rows again if the filter now
        finds one it did not, or no longer finds one."""
        again = False
        for index, session, counted in batch:
            was = self.matches(self.sessions[index])
            self.sessions[index] = session
            if session.described:
                self.known[session.path] = session
            if counted:
                self.done = index + 1
            key = str(index)
            if was != self.matches(session):
                again = True
            elif not again and key in self.table.rows:
                cells = row_cells(session, *self._widths)
                for column, cell in zip(self._columns, cells, strict=True):
                    self.table.update_cell(RowKey(key), column, cell)
        if again:
            self._show()
        self._where()

    # -- keys --------------------------------------------------------------------

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is not None:
            self.exit(self.sessions[int(key)].path)


def pick_session(
    listing: Listing,
    *,
    at: Path | None = None,
    known: dict[Path, StoredSession] | None = None,
    filter_text: str = "",
) -> tuple[Path | None, str]:
    """Run the list in this terminal: (the path picked or None, the filter
    typed). ``at``, ``known``, ``filter_text``: as the list was left."""
    app = SessionsApp(listing, at=at, known=known, filter_text=filter_text)
    return app.run(), app.filter_text


def app_for_session(path: Path) -> ReplayApp:
    """The app on a session picked, as ``replay-tui open PATH`` makes it:
    following it if it is being written now."""
    return make_app(str(path), follow=is_live(path))
