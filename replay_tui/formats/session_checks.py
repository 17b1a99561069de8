"""What the lines of an agent's session must be, checked before the rules run.

:class:`SessionChecker`: the envelope rules that still mean something when
seq is the line number and run_id the file's. :class:`ClaudeCodeChecker`:
what Claude Code promises of its records (each ``uuid`` once, a
``parentUuid`` that is a string or null), its ``parentUuid`` chain as
``claude --resume`` walks it (:mod:`replay_tui.formats.chain`: a break is a
finding, not a stop), and timestamps judged on their own track.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from replay_tui.core import strict_json
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
from replay_tui.formats.claude_records import (
    MESSAGE_KINDS,
    Usage,
    answers_call,
    block_ids,
    holds_message,
    message_usage,
    requests_call,
)
from replay_tui.formats.envelope import Event, LineError, SequenceChecker
from replay_tui.formats.id_table import IdTable


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


class ClaudeCodeChecker(SessionChecker):
    """:class:`SessionChecker` plus what Claude Code promises of its records:
    each ``uuid`` once, each ``parentUuid`` an earlier record (see the module)."""

    def __init__(
        self,
        kinds: frozenset[str],
        may_ignore: Callable[[Event], bool] | None,
        read_line: Callable[[int], bytes],
        chain: ChainIndex | None = None,
        earlier: dict[int, Usage] | None = None,
    ) -> None:
        super().__init__(kinds, may_ignore)
        self._seen = IdTable(read_line, lambda rec, text: rec.get("uuid") == text)
        #: Each tool call's request and result, and each API message's last
        #: line with a usage: the rules keep only open calls and the latest
        #: message, so a call requested or answered twice, and a message
        #: that resumes after others, are known here.
        self._call_asks = IdTable(read_line, requests_call)
        self._call_answers = IdTable(read_line, answers_call)
        self._message_lines = IdTable(read_line, holds_message)
        self._read_line = read_line
        #: The message of the last line with a usage.
        self._message_now: str | None = None
        self._message_line = 0
        #: Lines of a message that resumes after others -> its usage at its
        #: line before (the rules count the growth from there).
        self.earlier: dict[int, Usage] = earlier if earlier is not None else {}
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
            key = IdTable.key(uuid)
            if self._seen.has(key):
                earlier = self._seen.line_of(uuid, key)
                if earlier:
                    return bad("seq_duplicate", f"uuid {uuid} was already used at line {earlier}")
        if event.kind in _CALL_KINDS:
            twice = self._calls(event)
            if twice is not None:
                return bad("illegal_transition", twice)
        if event.kind in MESSAGE_KINDS:
            self._message(event)
        line = 0
        boundary = rec.get("type") == "system" and rec.get("subtype") == "compact_boundary"
        if parent is None:
            why = BOUNDARY if boundary else ROOT
        elif type(parent) is not str:
            return bad("bad_parent", "parentUuid must be a string or null")
        else:
            line = self._seen.first_line(IdTable.key(parent))
            if line:  # its cause, for p (the record's seq is its line)
                event.parent_seq = line
                why = LINKED
            elif self._new_chain(rec, side):
                why = BOUNDARY if boundary else SIDE_START
            else:
                why = BROKEN
                self._awaited.setdefault(IdTable.key(parent), []).append((event.line, parent))
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

    def _calls(self, event: Event) -> str | None:
        """A tool_use id requested before, or a call answered before: what
        the rules can no longer see once a call is answered."""
        rec, line = event.fields, event.line
        if event.kind == "tool_use":
            table, ids, twice = self._call_asks, block_ids(rec, "tool_use", "id"), _ASKED_TWICE
        else:
            table, ids = self._call_answers, block_ids(rec, "tool_result", "tool_use_id")
            twice = _TWICE
        here: set[str] = set()
        for cid in ids:
            key = IdTable.key(cid)
            earlier = line if cid in here else table.line_of(cid, key) if table.has(key) else 0
            if earlier:
                self.last_seq = event.seq - 1
                return twice.format(cid=cid, seq=earlier)
            table.add(key, line)
            here.add(cid)
        return None

    def _message(self, event: Event) -> None:
        """An API message's line: if its message resumes after lines of
        others, the usage it had at its line before. The usual next line
        of the same message costs no read."""
        found = message_usage(event.fields)
        if found is None or found[0] is None:
            return
        mid, line, table = found[0], event.line, self._message_lines
        key = IdTable.key(mid)
        if mid == self._message_now:
            table.move(key, self._message_line, line)
            self._message_line = line
            return
        earlier = table.line_of(mid, key) if table.has(key) else 0
        self._message_now, self._message_line = mid, line
        if not earlier:
            table.add(key, line)
            return
        table.move(key, earlier, line)
        try:
            before = message_usage(strict_json.loads_written(self._read_line(earlier - 1)))
        except (orjson.JSONDecodeError, OSError, IndexError):
            before = None
        if before is not None:
            self.earlier[line] = before[1]
            event.earlier_usage = before[1]  # type: ignore[attr-defined]

    def _mend(self, line: int, uuid: str, waiting: list[tuple[int, str]]) -> tuple[int, ...]:
        """Record ``line`` is the parent the records ``waiting`` named before
        it was written: mended from here on (Claude Code's reader reads the
        whole file first), unless following it loops."""
        mended = []
        for child, text in waiting:
            if text != uuid:  # another uuid of the same hash
                self._awaited.setdefault(IdTable.key(text), []).append((child, text))
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


_CALL_KINDS = frozenset({"tool_use", "tool_result"})
_ASKED_TWICE = "tool_use {cid} was already requested at seq {seq}"
_TWICE = "a second tool_result for {cid}: its result was recorded at seq {seq}"


def broken_words(parent: str, resume: Resume) -> str:
    """What a ``parentUuid`` that names no earlier record costs, in words."""
    before = resume.before
    return (
        f"parentUuid {parent} names no record before it: the chain breaks here, and "
        f"claude --resume from any later message of this chain loads from this line on: "
        f"the {before:,} record{'' if before == 1 else 's'} before it drop out"
    )
