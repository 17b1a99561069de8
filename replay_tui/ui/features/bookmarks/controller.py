"""Bookmarks as the app uses them, without Textual: which rows carry one,
what ``b`` / ``B`` / ``a`` do with them, the palette's list and their piece
of the status line. Loading and saving run in the screen's workers."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.state_dir import state_dir
from replay_tui.core.words import plural
from replay_tui.engine.report import refuse_inside_run
from replay_tui.formats.run import RunPaths
from replay_tui.handover.bookmarks import Bookmarks

#: The palette's words for a bookmark made on an earlier version of the ledger.
EARLIER_HELP = "bookmark of an earlier version of this ledger: the seq may not be the same event"


class Marks:
    """The person's bookmarks of the ledger shown (None until loaded)."""

    def __init__(self) -> None:
        self.bookmarks: Bookmarks | None = None

    def loaded(self, bookmarks: Bookmarks) -> list[str]:
        """Take the loaded bookmarks; what to tell the person of them."""
        self.bookmarks = bookmarks
        said = [bookmarks.problem] if bookmarks.problem else []
        if bookmarks.earlier:
            count = plural(len(bookmarks.earlier), "bookmark")
            said.append(f"{count} {bookmarks.why_earlier} (Ctrl+P lists them)")
        return said

    def rows(self) -> frozenset[int]:
        """Timeline rows (ledger lines) marked in the gutter."""
        marks = self.bookmarks.marks if self.bookmarks is not None else {}
        return frozenset(seq - 1 for seq in marks)

    def target(self, seq: int | None) -> tuple[int, Bookmarks] | str:
        """What ``b`` / ``a`` act on: the cursor's ``seq`` and the bookmarks,
        or why they cannot (still loading, no event at the cursor)."""
        if self.bookmarks is None:
            return "bookmarks are still loading"
        if seq is None:
            return "no event here to bookmark"
        return seq, self.bookmarks

    def toggle(self, seq: int) -> str:
        """``b``: bookmark ``seq`` or remove its bookmark; what to say."""
        assert self.bookmarks is not None
        marked = self.bookmarks.toggle(seq)
        return f"seq {seq} {'bookmarked' if marked else 'no longer bookmarked'}"

    def note(self, seq: int) -> str:
        return self.bookmarks.marks.get(seq, "") if self.bookmarks is not None else ""

    def next_after(self, here: int) -> tuple[int, bool] | None:
        """``B``: the next bookmarked seq after ``here``, and whether it
        wrapped to the first; None without bookmarks."""
        marks = sorted(self.bookmarks.marks) if self.bookmarks is not None else []
        if not marks:
            return None
        ahead = [s for s in marks if s > here]
        return (ahead[0], False) if ahead else (marks[0], True)

    def for_report(self, cursor_seq: int) -> tuple[list[int], dict[int, str]]:
        """``X``: the seqs a report covers (bookmarks and the cursor's) and the notes."""
        notes = dict(self.bookmarks.marks) if self.bookmarks is not None else {}
        return sorted({*notes, cursor_seq}), notes

    @staticmethod
    def report_folder(paths: RunPaths) -> Path:
        """Where ``X`` writes: the current folder, never the run folder (then
        the state directory, and the path it names says so)."""
        folder = Path.cwd()
        try:
            refuse_inside_run(paths, folder)
        except CannotRun:
            folder = state_dir() / "reports"
            folder.mkdir(parents=True, exist_ok=True)
        return folder

    def palette(self) -> list[tuple[str, str, int]]:
        """(title, help, seq) of each bookmark, for the command palette."""
        if self.bookmarks is None:
            return []
        found = []
        for seq, note in self.bookmarks.ordered():
            title = f"◆ seq {seq}" + (f": {escape_controls(note)}" if note else "")
            found.append((title, "bookmark: go there", seq))
        for seq, note in sorted(self.bookmarks.earlier.items()):
            title = f"◇ seq {seq}" + (f": {escape_controls(note)}" if note else "")
            found.append((title, EARLIER_HELP, seq))
        return found

    def status(self, text: Text, seq: int | None) -> None:
        """Its piece of the status line: ``◆`` and the note at the cursor's seq."""
        if self.bookmarks is None or seq is None or seq not in self.bookmarks.marks:
            return
        text.append("  ◆ ", style="bold #ef9f76")
        note = self.bookmarks.marks[seq]
        if note:
            text.append(escape_controls(note), style="#ef9f76")
