"""Which records ``claude --resume`` would load, as a rail along the timeline.

When a resume from the session's last record would leave records out (a
broken ``parentUuid`` chain, a compaction, a branch the conversation left
after an edit), the rows it loads are marked in the timeline's gutter, so
what drops out shows at a glance without filtering (``m`` filters to them).

One byte a line, kept current as the file grows: a new last record that
continues the walk adds its own lines; anything else (a branch, a link
mended by a parent written late) walks the chain again, once.
"""

from __future__ import annotations

from array import array

from replay_tui.formats.chain import NOT_RECORD, ChainIndex

#: The filter that shows the records ``claude --resume`` from a line loads.
RESUME_FILTER = "resume from line "


def resume_query(chain: ChainIndex | None, seq: int) -> str | None:
    """The filter that shows what a resume from the record at (or last
    before) ``seq`` loads; None without a chain."""
    if chain is None:
        return None
    line = chain.last_record(seq)
    return f"{RESUME_FILTER}{line}" if line else None


def resume_rows(chain: ChainIndex | None, query: str, valid: int) -> array[int] | None:
    """The rows (0-based) of a :data:`RESUME_FILTER` query; None if it is not one."""
    number = query[len(RESUME_FILTER) :].strip()
    if chain is None or not query.startswith(RESUME_FILTER) or not number.isdigit():
        return None
    return array("L", (line - 1 for line in chain.walk(int(number), upto=valid)))


class ResumeRail:
    """Line index -> loaded by a resume from the last record (see the module)."""

    def __init__(self, chain: ChainIndex) -> None:
        self._chain = chain
        self._kept = bytearray()
        self._last = 0  # the line the rail walks back from (1-based; 0: none yet)
        self._count = 0  # records on the rail
        self._valid = -1
        self._mended = 0
        #: Whether a resume from the last record leaves records out (the rail is shown).
        self.shown = False

    def kept(self, index: int, valid: int) -> bool:
        """Whether ledger line ``index`` (0-based) is loaded by a resume from
        the last record of the first ``valid`` lines (False when nothing drops)."""
        if valid != self._valid or len(self._chain.mended) != self._mended:
            self._update(valid)
        return self.shown and index < len(self._kept) and self._kept[index] == 1

    def _update(self, valid: int) -> None:
        chain = self._chain
        self._valid = valid
        last = chain.last_record(min(valid, len(chain)))
        if not last:
            self.shown = False
            return
        mended = len(chain.mended)
        moved = mended != self._mended or (last != self._last and not self._extend(last, valid))
        if moved:
            self._walk(last, valid)
        self._mended = mended
        self.shown = 0 < self._count < chain.main_records(last)

    def _parent(self, line: int, valid: int) -> int:
        chain = self._chain
        parent = chain.parent[line]
        if not parent:
            mended = chain.mended.get(line, 0)
            parent = mended if mended <= valid else 0
        return parent

    def _extend(self, last: int, valid: int) -> bool:
        """The walk back from ``last`` reaches the rail's last line: add the
        lines on the way; False if it does not (a branch, a break)."""
        if not self._last:
            return False
        found: list[int] = []
        line = last
        while line > self._last:
            found.append(line)
            line = self._parent(line, valid)
        if line != self._last:
            return False
        self._mark(found)
        self._last = last
        return True

    def _walk(self, last: int, valid: int) -> None:
        """The rail again, from ``last``: marked as the walk goes (no list
        of a million lines), at most once a line (a loop ends it)."""
        kept = self._kept = bytearray(max(len(self._kept), last))
        self._count = 0
        self._last = last
        if self._chain.why[last] == NOT_RECORD:
            return
        line = last
        while line and not kept[line - 1]:
            kept[line - 1] = 1
            self._count += 1
            line = self._parent(line, valid)

    def _mark(self, lines: list[int]) -> None:
        kept = self._kept
        for line in lines:
            if line > len(kept):
                kept.extend(bytes(line - len(kept)))
            if not kept[line - 1]:
                kept[line - 1] = 1
                self._count += 1
