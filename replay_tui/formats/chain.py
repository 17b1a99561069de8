"""The ``parentUuid`` chain of a Claude Code transcript, as ``claude --resume`` walks it.

Every record with a ``uuid`` names its parent. To resume a session, Claude
Code reads the whole file, then walks back from the last message along
``parentUuid`` until a record has none: what the walk meets is the
conversation it loads, and nothing else. A compaction's boundary
(``compact_boundary``, ``parentUuid: null``) ends the walk by design (its
summary stands for what came before).

Claude Code itself sometimes writes a ``parentUuid`` that names a record the
file does not hold (most often on the first prompt after resuming a
compacted session), and goes on writing. That is not a stop here, because
its writer carried on: it is a finding that says what it costs, since a
later ``--resume`` walks back to it and no further, so every record before
it drops out of the conversation.

:class:`ChainIndex` keeps, per line, where the walk back from that line
stops and how many records it meets (17 bytes a line), so the cost is known
at every prefix without walking. A parent written *after* its child is found
by Claude Code's reader (it reads the whole file first): such a link is
mended from the line where the parent appears on (``mended``), unless it
would close a loop.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple

#: What a line is in the chain (:attr:`ChainIndex.why`).
NOT_RECORD = 0  # no uuid: a summary, a file-history snapshot, ...
ROOT = 1  # parentUuid null: a conversation starts here
BOUNDARY = 2  # a compaction's boundary: the walk stops here by design
BROKEN = 3  # parentUuid names no record before it: the walk stops here
SIDE_START = 4  # a sub-agent's record whose parent lives in the main session
LINKED = 5  # its parent is an earlier record

#: How a walk that stops at a line of each kind is said.
STOPS = {ROOT: "start", BOUNDARY: "compaction", BROKEN: "break", SIDE_START: "start"}


class Resume(NamedTuple):
    """What ``claude --resume`` loads when it walks back from one line."""

    #: The line the walk stops at (its first record).
    start: int
    #: Why it stops there: ``start``, ``compaction`` or ``break``.
    stops: str
    #: Records the walk meets, the line's own included.
    loads: int
    #: Main-chain records before ``start``: what it never reaches.
    before: int


class ChainIndex:
    """Per line (1-based, in file order), its place in the ``parentUuid`` chain."""

    def __init__(self) -> None:
        self.why = bytearray(b"\0")  # index 0 unused: lines are 1-based
        self.parent = array("i", [0])
        self.start = array("i", [0])
        self.depth = array("i", [0])
        #: Main-chain records (uuid, not a sub-agent's) before each line.
        self.ordinal = array("i", [0])
        self._count = 0
        #: child line -> the parent's line, written after the child.
        self.mended: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.why) - 1

    def note(self, line: int, why: int, parent: int, main: bool) -> None:
        """Line ``line`` (the next) is ``why``, with ``parent``'s line (0: none)."""
        while len(self.why) < line:  # lines that were not records
            self._append(NOT_RECORD, 0, 0, 0)
        if why == LINKED:
            start, depth = self.start[parent], self.depth[parent] + 1
        elif why == NOT_RECORD:
            start, depth = 0, 0
        else:
            start, depth = line, 1
        self._append(why, parent, start, depth)
        if main and why != NOT_RECORD:
            self._count += 1

    def _append(self, why: int, parent: int, start: int, depth: int) -> None:
        self.why.append(why)
        self.parent.append(parent)
        self.start.append(start)
        self.depth.append(depth)
        self.ordinal.append(self._count)

    def mend(self, child: int, parent: int) -> int | None:
        """``child``'s parent is written at ``parent`` (after it): mend the
        link, or return the line where following it would come back to
        ``child`` (a loop: left broken)."""
        line = parent
        seen = 0
        while line and seen <= len(self):
            if line == child:
                return parent
            start = self.start[line]
            if start == child:
                return parent
            line = self.mended.get(start, 0)
            seen += 1
        self.mended[child] = parent
        return None

    def resume(self, line: int, *, upto: int | None = None) -> Resume | None:
        """The walk back from ``line`` as the file stood at line ``upto``
        (default: ``line``): links mended later than that are not taken."""
        why = self.why
        if not 0 < line < len(why) or why[line] == NOT_RECORD:
            return None
        loads = self.depth[line]
        start = self.start[line]
        if not self.mended:  # the usual case: one look, no walk
            return Resume(start, STOPS.get(why[start], "start"), loads, self.ordinal[start])
        upto = line if upto is None else upto
        hops = 0
        while hops <= len(self):
            parent = self.mended.get(start)
            if parent is None or parent > upto:
                break
            loads += self.depth[parent]
            start = self.start[parent]
            hops += 1
        return Resume(start, STOPS.get(self.why[start], "start"), loads, self.ordinal[start])

    def walk(self, line: int, *, upto: int | None = None) -> list[int]:
        """The lines a resume from ``line`` loads, first to last (as the file
        stood at ``upto``, default ``line``); empty if ``line`` is in no chain."""
        if not 1 <= line <= len(self) or self.why[line] == NOT_RECORD:
            return []
        upto = line if upto is None else upto
        found: list[int] = []
        seen: set[int] = set()
        while line and line not in seen:
            seen.add(line)
            found.append(line)
            parent = self.parent[line]
            if not parent:
                mended = self.mended.get(line, 0)
                parent = mended if mended <= upto else 0
            line = parent
        found.reverse()
        return found

    def main_records(self, line: int) -> int:
        """Main-chain records (a uuid, not a sub-agent's) up to ``line`` included."""
        if line + 1 < len(self.ordinal):
            return self.ordinal[line + 1]
        return self._count

    def last_record(self, line: int) -> int:
        """The last line at or before ``line`` that is in a chain (0: none)."""
        line = min(line, len(self))
        while line > 0 and self.why[line] == NOT_RECORD:
            line -= 1
        return line
