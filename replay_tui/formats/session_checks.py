"""What the lines of an agent's session must be, checked before the rules run.

:class:`SessionChecker`: the envelope rules that still mean something when
seq is the line number and run_id the file's. :class:`ClaudeCodeChecker`:
what Claude Code promises of its records (each ``uuid`` once, a
``parentUuid`` that is a string or null), its ``parentUuid`` chain as
``claude --resume`` walks it (:mod:`replay_tui.formats.chain`: a break is a
finding, not a stop), and timestamps judged on their own track.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import orjson

from replay_tui.formats.chain import (
    BOUNDARY,
    BROKEN,
    LINKED,
    NOT_RECORD,
    ROOT,
    SIDE_START,
    ChainIndex,
    Resume,
)
from replay_tui.formats.envelope import Event, LineError, SequenceChecker


class SessionChecker(SequenceChecker):
    """The envelope rules that still mean something when seq is the line
    number and run_id the file's: only a kind the rules know (or let pass).
    Record fields named like envelope fields (``call_id``, ``parent_seq``)
    are the record's, never checked as the envelope's."""

    def check(self, event: Event) -> LineError | None:
        if event.kind not in self.kinds and not self.ignorable(event):
            return LineError(
                "unknown_kind",
                f"kind {event.kind!r} is not known to these rules",
                event.line,
                event.offset,
                event.seq,
                event.kind,
            )
        if self.run_id is None:
            self.run_id = event.run_id
        self.last_seq = event.seq
        return None


class _SeenIds:
    """The uuids seen so far, as 64-bit hashes in an open-addressing table of
    two arrays (12 bytes a slot, at most two thirds full: under 20 bytes a
    record), each with the line it was seen at. A hash found again is
    confirmed by reading that line, so two uuids that share a hash are never
    taken for one."""

    def __init__(self, read_line: Callable[[int], bytes]) -> None:
        self._read_line = read_line
        self._keys = array("Q", bytes(8 * 1024))
        self._lines = array("I", bytes(4 * 1024))
        self._mask = 1023
        self._count = 0

    @staticmethod
    def key(text: str) -> int:
        return (hash(text) & 0xFFFF_FFFF_FFFF_FFFF) or 1

    def has(self, key: int) -> bool:
        """Whether a uuid with this hash was seen (not confirmed)."""
        return self.first_line(key) != 0

    def first_line(self, key: int) -> int:
        """The line of the first uuid seen with this hash, unconfirmed; 0 if
        none (a parent: whoever reads that line confirms it)."""
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:
            k = keys[i]
            if k == key:
                return self._lines[i]
            if k == 0:
                return 0
            i = (i + 1) & mask

    def line_of(self, text: str, key: int) -> int:
        """The line where ``text`` was seen, confirmed; 0 if it was not."""
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:
            k = keys[i]
            if k == 0:
                return 0
            if k == key:
                line = self._lines[i]
                try:
                    earlier = orjson.loads(self._read_line(line - 1))
                except (orjson.JSONDecodeError, OSError, IndexError):
                    earlier = None
                if type(earlier) is dict and earlier.get("uuid") == text:
                    return line
            i = (i + 1) & mask

    def add(self, key: int, line: int) -> None:
        if 3 * (self._count + 1) > 2 * (self._mask + 1):
            self._grow()
        keys, mask = self._keys, self._mask
        i = key & mask
        while keys[i] != 0:
            i = (i + 1) & mask
        keys[i] = key
        self._lines[i] = line
        self._count += 1

    def _grow(self) -> None:
        old_keys, old_lines = self._keys, self._lines
        size = 2 * (self._mask + 1)
        self._keys = keys = array("Q", bytes(8 * size))
        self._lines = lines = array("I", bytes(4 * size))
        self._mask = mask = size - 1
        for k, line in zip(old_keys, old_lines, strict=True):
            if k:
                i = k & mask
                while keys[i] != 0:
                    i = (i + 1) & mask
                keys[i] = k
                lines[i] = line


class ClaudeCodeChecker(SessionChecker):
    """:class:`SessionChecker` plus what Claude Code promises of its records:
    each ``uuid`` once, each ``parentUuid`` an earlier record (see the module)."""

    def __init__(
        self,
        kinds: frozenset[str],
        may_ignore: Callable[[Event], bool] | None,
        read_line: Callable[[int], bytes],
        chain: ChainIndex | None = None,
    ) -> None:
        super().__init__(kinds, may_ignore)
        self._seen = _SeenIds(read_line)
        #: A record with ``isSidechain: false`` was seen: not a sub-agent's transcript.
        self._main = False
        self.chain = chain if chain is not None else ChainIndex()
        #: Parents named before they were written: their uuid's hash ->
        #: [(the child's line, the uuid)].
        self._awaited: dict[int, list[tuple[int, str]]] = {}
        #: Per track (0 the main conversation, 1 sub-agents' records): the
        #: last ts, and when the latest tool call was requested (seconds).
        self._last: list[float | None] = [None, None]
        self._requested: list[float | None] = [None, None]
        #: Calls requested and not yet answered: when (seconds).
        self._asked: dict[str, float] = {}
        #: The record just checked: a sub-agent's, and what it is in the chain.
        self._side_now = False
        self._why_now = NOT_RECORD

    def check(self, event: Event) -> LineError | None:
        problem = super().check(event)
        if problem is not None:
            return problem
        rec = event.fields
        uuid = rec.get("uuid")
        parent = rec.get("parentUuid")
        side = rec.get("isSidechain")
        if side is False:
            self._main = True
        if uuid is None and parent is None:
            self._side_now, self._why_now = side is True, NOT_RECORD
            return None

        def bad(code: str, message: str) -> LineError:
            self.last_seq = event.seq - 1
            return LineError(code, message, event.line, event.offset, event.seq, event.kind)

        key = 0
        if uuid is not None:
            if type(uuid) is not str:
                return bad("bad_envelope", "uuid must be a string")
            key = _SeenIds.key(uuid)
            if self._seen.has(key):
                earlier = self._seen.line_of(uuid, key)
                if earlier:
                    return bad("seq_duplicate", f"uuid {uuid} was already used at line {earlier}")
        line = 0
        boundary = rec.get("type") == "system" and rec.get("subtype") == "compact_boundary"
        if parent is None:
            why = BOUNDARY if boundary else ROOT
        elif type(parent) is not str:
            return bad("bad_parent", "parentUuid must be a string or null")
        else:
            line = self._seen.first_line(_SeenIds.key(parent))
            if line:  # its cause, for p (the record's seq is its line)
                event.parent_seq = line
                why = LINKED
            elif self._new_chain(rec, side):
                why = BOUNDARY if boundary else SIDE_START
            else:
                why = BROKEN
                self._awaited.setdefault(_SeenIds.key(parent), []).append((event.line, parent))
        self._side_now, self._why_now = side is True, why
        chain = self.chain
        chain.note(event.line, why, line, side is not True)
        resume = chain.resume(event.line)
        if why == BROKEN:
            assert resume is not None and isinstance(parent, str)
            self.findings.append(("broken_chain", broken_words(parent, resume)))
        if uuid is not None:
            self._seen.add(key, event.line)
            waiting = self._awaited.pop(key, None) if self._awaited else None
            if waiting:
                event.mended = self._mend(event.line, uuid, waiting)  # type: ignore[attr-defined]
        event.chain = resume  # type: ignore[attr-defined]
        event.chain_why = why  # type: ignore[attr-defined]
        return None

    def _mend(self, line: int, uuid: str, waiting: list[tuple[int, str]]) -> tuple[int, ...]:
        """Record ``line`` is the parent the records ``waiting`` named before
        it was written: mended from here on (Claude Code's reader reads the
        whole file first), unless following it loops."""
        mended = []
        for child, text in waiting:
            if text != uuid:  # another uuid of the same hash
                self._awaited.setdefault(_SeenIds.key(text), []).append((child, text))
                continue
            loop = self.chain.mend(child, line)
            if loop is not None:
                self.findings.append(
                    (
                        "chain_loop",
                        f"uuid {uuid} is the parent line {child} named, and its own chain "
                        f"leads back to line {child}: a loop (left broken at line {child})",
                    )
                )
            else:
                mended.append(child)
                self.findings.append(
                    (
                        "chain_order",
                        f"this record is the parent line {child} named before it was written: "
                        "claude --resume still finds it (it reads the whole file first)",
                    )
                )
        return tuple(mended)

    def ts_went_back(self, event: Event) -> bool:
        """A ``ts`` earlier than the record before it on its own track, with
        two exceptions that say nothing. A sub-agent's records (``isSidechain``)
        are a track of their own, run beside the main one, and a sub-agent's
        first record carries the time its task was given. Claude Code writes
        the results of parallel calls (and queue records between them) as
        they come, a few milliseconds out of order: a result no earlier than
        its own call was requested is not warned of; one that goes back
        before its request is. A meta note (``isMeta``) is written with
        a time ahead of the records of its turn: it moves no track on."""
        now = event.ts_s
        if event.ts is None or now is None:
            return False
        self.last_ts = now
        track = 1 if self._side_now else 0
        last = self._last[track]
        if event.fields.get("isMeta") is not True:  # a meta note's time runs ahead of its turn's
            self._last[track] = now
        if track and self._why_now in (ROOT, SIDE_START):
            return False  # a sub-agent starts: its time is its task's
        requested = self._requested[track]
        call = event.call_id
        if event.kind == "tool_use":
            if requested is None or now > requested:
                self._requested[track] = now
            if call is not None:
                self._asked[call] = now
        went = last is not None and now < last
        if event.kind == "tool_result":
            asked = self._asked.pop(call, None) if call is not None else None
            if went and asked is not None:
                return now < asked  # before its own request
            if went and requested is not None:
                return now < requested
        return went

    def _new_chain(self, rec: dict[str, Any], side: Any) -> bool:
        """A record whose parent may be elsewhere: a compaction's boundary
        (``logicalParentUuid`` names the old chain), or a sub-agent's record
        in its own transcript (its parents may be in the main session)."""
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            return True
        return side is True and not self._main


def broken_words(parent: str, resume: Resume) -> str:
    """What a ``parentUuid`` that names no earlier record costs, in words."""
    before = resume.before
    return (
        f"parentUuid {parent} names no record before it: the chain breaks here, and "
        f"claude --resume from any later message of this chain loads from this line on: "
        f"the {before:,} record{'' if before == 1 else 's'} before it drop out"
    )
