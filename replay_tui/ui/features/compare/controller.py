"""Compare mode without Textual: B beside the run, whether B is replayed
yet, the rows where they part, and what the state pane and the status line
say of it. The screen runs the workers and tells this what they found."""

from __future__ import annotations

from rich.text import Text

from replay_tui.core.safe_text import escape_controls
from replay_tui.engine.replay import Replay
from replay_tui.questions.sidebyside import compare_at, without
from replay_tui.ui.render.changes import change_lines
from replay_tui.ui.render.json_text import json_text

#: Past this many events, states are not compared at every step (diff does it).
COMPARE_EACH_STEP_UP_TO = 50_000


class Comparison:
    """B (another run, other rules, or a what-if branch: ``b.skip``)."""

    def __init__(self, b: Replay | None, *, strict: bool) -> None:
        self.b = b
        #: B has been replayed to its end.
        self.ready = False
        #: Timeline rows where A and B part (None until both are replayed).
        self.differs: list[int] | None = None
        self.strict = strict
        self._cache: tuple[int, int, list[Text]] | None = None

    def start(self, b: Replay) -> None:
        """Compare with ``b`` from now on (the caller closed any B before)."""
        self.b, self.ready, self.differs, self._cache = b, False, None, None

    def stop(self) -> Replay | None:
        """Leave compare mode; the B that was shown, for the caller to close."""
        old, self.b = self.b, None
        self.ready, self.differs, self._cache = False, None, None
        return old

    def replayed(self) -> None:
        self.ready = True
        self._cache = None

    def wants_differences(self, a: Replay) -> bool:
        """Both sides replayed, and the rows where they part not yet looked for."""
        return self.b is not None and self.ready and a.finished and self.differs is None

    def next_difference(self, here: int, direction: int) -> int | None:
        """The next row (or previous, for -1) past ``here`` where A and B part."""
        ahead = [i for i in self.differs or () if (i > here if direction > 0 else i < here)]
        if not ahead:
            return None
        return ahead[0] if direction > 0 else ahead[-1]

    def difference_from(self, here: int, direction: int) -> int | str:
        """``]`` / ``[``: the row to go to, or what to say instead."""
        if self.b is None:
            return "not comparing: s compares with this event left out"
        if self.differs is None:
            return "still comparing…"
        found = self.next_difference(here, direction)
        return "no more differences that way" if found is None else found

    def name(self) -> str:
        b = self.b
        if b is None:
            return ""
        if b.skip:
            return f"HYPOTHETICAL: {b.paths.name} {without(b.skip)}"
        return f"{b.paths.name} ({b.reducer.name} {b.reducer.version})"

    def lines(self, a: Replay, seq: int, *, reveal: bool) -> list[Text] | None:
        """B beside A after prefix ``seq``, for the state pane (cached per seq)."""
        b = self.b
        if b is None:
            return None
        key = (seq, int(self.ready))
        if self._cache is not None and self._cache[:2] == key:
            return self._cache[2]
        head = Text.assemble(("B", "bold #ef9f76"), "  ", (escape_controls(self.name()), "bold"))
        lines = [head]
        if not self.ready:
            lines.append(Text("B is being replayed…", style="dim"))
        elif a.valid > COMPARE_EACH_STEP_UP_TO and seq > 0:
            lines.append(
                Text(
                    "states too big to compare here at each step: replay-tui diff A B says "
                    "where they part",
                    style="dim",
                )
            )
        else:
            lines.extend(self._at(a, b, seq, reveal=reveal))
        lines.append(Text("─" * 40, style="dim"))
        self._cache = (seq, int(self.ready), lines)
        return lines

    def _at(self, a: Replay, b: Replay, seq: int, *, reveal: bool) -> list[Text]:
        at = compare_at(a, b, seq, strict=self.strict)
        lines: list[Text] = []
        if at.b_left_out:
            lines.append(Text("B leaves this event out", style="bold #ef9f76"))
        elif at.events_differ:
            lines.append(Text("B's event here differs:", style="bold #ef9f76"))
            lines.append(json_text(at.b_event, reveal=reveal, limit=400))
        if at.b_stopped is not None:
            lines.append(
                Text(f"B has no state here: {escape_controls(at.b_stopped)}", style="#e78284")
            )
            return lines
        word = escape_controls(at.b_word or "")
        lines.append(Text.assemble(f"B after prefix {seq} → ", (word, "bold #a6d189")))
        if at.changes:
            lines.append(Text(f"A → B at prefix {seq}:", style="dim"))
            lines.extend(change_lines(at.changes, reveal=reveal, limit=160))
            if at.cut:
                lines.append(Text(f"… and {at.cut} more", style="dim"))
        elif seq <= a.valid:
            lines.append(Text("A and B: the same state here", style="dim"))
        return lines

    def status(self, text: Text, *, short: bool = False) -> None:
        """Its piece of the status line: B's verdict and how many rows part
        (``short``: in fewer words, for a narrow terminal)."""
        b = self.b
        if b is None:
            return
        text.append("  vs ", style="bold")
        if b.skip:
            text.append(
                " HYPOTHETICAL " if not short else " WHAT-IF ", style="bold black on #ef9f76"
            )
            text.append(" ")
        if not self.ready:
            text.append(" B replaying… ", style="bold black on #e5c890")
        elif b.error is not None:
            where = f"seq {b.error.seq}" if b.error.seq is not None else "start"
            if short:
                where = where.removeprefix("seq ")
            text.append(f" B ✗ {where}: {b.error.code} ", style="bold white on #a03030")
        else:
            text.append(" B ✓ verified ", style="bold black on #a6d189")
        if self.differs is not None:
            n = len(self.differs)
            said = (
                f"  {n} part"
                if short
                else f"  {n} {'row parts' if n == 1 else 'rows part'} (] / [)"
            )
            text.append(said, style="#ef9f76")
