"""Bookmarks, the report and links as the screen uses them: a widget with
nothing to draw that runs :class:`~replay_tui.ui.features.bookmarks.controller.Marks` (no Textual
there) with its workers (loading, saving, writing the report) and its
words. The screen tells it the cursor's seq; it tells the screen, as
:class:`MarksChanged`, which rows carry a bookmark."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import cast

from textual import work
from textual.app import SystemCommand
from textual.widget import Widget

from replay_tui.core.errors import CannotRun
from replay_tui.engine.replay import Replay
from replay_tui.handover.bookmarks import Bookmarks
from replay_tui.handover.document import write_report
from replay_tui.state.paths import StatePath
from replay_tui.ui.features.bookmarks.controller import Marks
from replay_tui.ui.messages import BookmarksLoaded, MarksChanged, Notice
from replay_tui.ui.screens.prompts import NoteScreen, PromptHost


class MarkKeeper(Widget):
    """``b`` ``B`` ``a`` ``X`` ``c``: the bookmarks of the ledger shown."""

    DEFAULT_CSS = "MarkKeeper { display: none; }"

    def __init__(self, marks: Marks, replay: Callable[[], Replay]) -> None:
        super().__init__()
        self.marks = marks
        #: The replay shown (the screen swaps replays; the ledger stays).
        self._replay = replay

    def on_mount(self) -> None:
        self._load(self._replay().paths.events)

    @work(thread=True, exclusive=True, group="bookmarks-load", exit_on_error=False)
    def _load(self, ledger: Path) -> None:
        """The person's bookmarks of this ledger (hashing its recorded prefix)."""
        self.post_message(BookmarksLoaded(ledger, Bookmarks.load(ledger)))

    def on_bookmarks_loaded(self, message: BookmarksLoaded) -> None:
        message.stop()
        if message.ledger != self._replay().paths.events:
            return
        for said in self.marks.loaded(message.bookmarks):
            self.notify(said, severity="warning", timeout=8, markup=False)
        self._changed()

    @work(thread=True, group="bookmarks-save", exit_on_error=False)
    def _save(self, bookmarks: Bookmarks) -> None:
        """Write them to the state directory (never the run folder)."""
        try:
            bookmarks.save()
        except OSError as exc:
            self.post_message(Notice(f"bookmarks not saved: {exc}", "error", 8))

    def _changed(self) -> None:
        self.post_message(MarksChanged(self.marks.rows()))

    def _target(self, seq: int | None) -> tuple[int, Bookmarks] | None:
        found = self.marks.target(seq)
        if isinstance(found, str):
            loading = self.marks.bookmarks is None
            self.notify(found, severity="information" if loading else "warning", timeout=3)
            return None
        return found

    def toggle(self, seq: int | None) -> None:
        """``b``: bookmark the event at the cursor, or remove its bookmark."""
        target = self._target(seq)
        if target is not None:
            said = self.marks.toggle(target[0])
            self._save(target[1])
            self._changed()
            self.notify(said, timeout=2)

    def annotate(self, seq: int | None) -> None:
        """``a``: a one-line note on the event at the cursor (bookmarking it)."""
        target = self._target(seq)
        if target is None:
            return
        at, bookmarks = target

        def done(note: str | None) -> None:
            if note is not None:
                bookmarks.annotate(at, note)
                self._save(bookmarks)
                self._changed()

        cast(PromptHost, self.app).push_prompt(NoteScreen(at, self.marks.note(at)), done)

    def next_after(self, here: int) -> int | None:
        """``B``: the next bookmarked seq (saying so when it wraps)."""
        found = self.marks.next_after(here)
        if found is None:
            self.notify("no bookmarks: b bookmarks the event at the cursor", timeout=3)
            return None
        seq, wrapped = found
        if wrapped:
            self.notify(f"wrapped to the first bookmark: seq {seq}", timeout=2)
        return seq

    def write_report(self, cursor_seq: int, watched: StatePath | None = None) -> None:
        """``X``: the bookmarks (with their notes) and the cursor's seq, as a
        Markdown report (never in the run folder), with the watched path's
        values over the run."""
        seqs, notes = self.marks.for_report(cursor_seq)
        folder = self.marks.report_folder(self._replay().paths)
        self.notify(f"writing the report of seq {', '.join(map(str, seqs))}…", timeout=2)
        charts = [watched] if watched is not None else []
        self._report(self._replay(), seqs, notes, folder, charts)

    @work(thread=True, exclusive=True, group="report", exit_on_error=False)
    def _report(
        self,
        replay: Replay,
        seqs: list[int],
        notes: dict[int, str],
        folder: Path,
        charts: list[StatePath],
    ) -> None:
        """Write the report (it reads the whole ledger for its sha256)."""
        try:
            path = write_report(replay, seqs, notes, html=False, folder=folder, charts=charts)
        except (CannotRun, OSError) as exc:
            self.post_message(Notice(f"report not written: {exc}", "error"))
            return
        self.post_message(Notice(f"wrote {path}", timeout=8))

    def copy_link(self, link: str) -> None:
        """``c``: ``RUN@SEQ``, which ``replay-tui`` opens at that seq."""
        self.app.copy_to_clipboard(link)
        said = f"copied the link {link} (replay-tui {link} opens this seq)"
        self.notify(said, timeout=4, markup=False)

    def commands(self, go: Callable[[int], object]) -> Iterable[SystemCommand]:
        """The palette's bookmarks: each goes to its seq with ``go``."""
        for title, help_text, seq in self.marks.palette():
            yield SystemCommand(title, help_text, partial(go, seq))
