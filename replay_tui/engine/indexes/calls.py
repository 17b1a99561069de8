"""Which events make one call: the index behind the folded timeline (``v``).

Rules that can say which call an event belongs to (their optional
``call_of``, see :mod:`replay_tui.reducers.base`) are asked once per event
during the forward pass, so folding a million-event run into one row per
call costs no second read. What is kept is a few bytes an event: the call
each line belongs to and the next line of the same call (a linked list, so
a call's events are walked without a list per call), and per call its first
and last line and how many it has. The rows a folded timeline shows are
appended as they come: a line in no call, or the first line of a call.

Calls can nest (spans in a trace), where the rules say so (their optional
``calls_nest = True``: a ``parent_seq`` that names another call's line means
"inside it", as a span's start names its parent span's start; a Claude Code
record's names the record before it, which is no container). A call's
*parent* is then the call of the line its first line's ``parent_seq`` names,
noted as the call starts (4 bytes a call, and how many children each has),
so the folded timeline draws a tree without reading a line again. A
``parent_seq`` naming a line in no call, or not yet noted, gives no parent.

A parent can come after its children: a span is exported when it ends, so
an SDK's simple span processor sends the children first. Rules that say so
(their optional ``call_parent(event) -> str | None``: the name, as
``call_of`` gives it, of the call this event's call is inside) have a call
placed under its parent by name: at once if that call is known, else as
soon as it starts (a call waiting for a parent that never comes stays a
root). Lines are never moved: the tree is a view over them. A parent link
that would close a loop is not made, so every call is reached from a root.
Each call's start (its first line's ``ts``) is kept too, so children are
drawn in the order they started, whatever order they came in.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import count

from replay_tui.formats.envelope import Event

NO_CALL = -1


class CallIndex:
    """Line index -> call number, and each call's lines, in ledger order."""

    def __init__(
        self,
        call_of: Callable[[Event], str | None],
        failed: Callable[[Event], bool] | None = None,
        *,
        nests: bool = False,
        parent_of: Callable[[Event], str | None] | None = None,
        end_kinds: Collection[str] | None = None,
    ) -> None:
        self._call_of = call_of
        #: Calls nest: a call's parent is the call its first line's parent_seq
        #: names, or (``parent_of``, the rules' ``call_parent``) the call named.
        self.nests = nests
        self._parent_of = parent_of if nests else None
        #: Per call: its parent's name was said (found, or waited for).
        self._placed = bytearray()
        #: A parent's name not yet a call -> the calls waiting to go inside it.
        self._waiting: dict[str, list[int]] = {}
        #: Calls waiting for their parent to start (still roots).
        self.awaiting = 0
        self._failed = failed
        #: The only kinds ``failed`` can be true of, where the rules say
        #: (their optional ``call_end_kinds``); None: any kind.
        self._end_kinds = end_kinds
        #: The lines that end a call in failure, in order (``e`` stops there),
        #: where the rules say how calls end (``failed``).
        self.failed = array("i")
        self._numbers: dict[str, int] = {}
        #: Per call: the name the rules gave it (a call_id, ``activity:5``).
        self.keys: list[str] = []
        #: Per line (index into the ledger): its call's number, or NO_CALL.
        self.call = array("i")
        #: Per line: the next line of the same call, or NO_CALL.
        self._next = array("i")
        #: Per call: its first line, its last line so far, its line count.
        self.first = array("i")
        self.last = array("i")
        self.count = array("i")
        #: The rows of the folded timeline, in ledger order.
        self.rows = array("i")
        #: Per call: its parent call (NO_CALL: a root), and how many children it has.
        self.parent = array("i")
        self.children = array("i")
        #: Calls with a parent (0: a flat list, drawn as ever).
        self.nested = 0
        #: Per call, where calls nest: its first line's ts (seconds; NaN: none).
        self.start = array("d")
        #: Calls noted whole: the app's thread reads the index while the
        #: forward pass notes lines, and a call is counted (and its first
        #: line made a row) only once every per-call and per-line array has
        #: its entry (never an index past one's end).
        self._calls = 0

    def __len__(self) -> int:
        """Lines noted so far (validated lines, in order)."""
        return len(self.call)

    def note(self, index: int, event: Event) -> None:
        """Line ``index`` (validated) is ``event``: which call is it part of?"""
        calls = self.call
        if index != len(calls):
            if index < len(calls):  # a retry after a pending receipt
                return
            while len(calls) < index:  # not expected: lines come in order
                self._alone(len(calls))
        try:
            key = self._call_of(event)
        except Exception:  # optional rules code: a bug leaves the event alone
            key = None
        if not isinstance(key, str):
            self._alone(index)
            return
        number = self._numbers.get(key)
        new = number is None
        if number is None:
            number = self._numbers[key] = len(self.first)
            self.keys.append(key)
            self.first.append(index)
            self.last.append(index)
            self.count.append(1)
            self._note_parent(number, index, event)
        else:
            last = self.last
            self._next[last[number]] = index
            last[number] = index
            self.count[number] += 1
            if self._parent_of is not None and not self._placed[number]:
                self._place_by_name(number, event)  # a span's start after its logs
        calls.append(number)
        self._next.append(NO_CALL)
        if new:  # counted, and a row, once every entry of line and call is there
            self.rows.append(index)
            self._calls = number + 1
        ends = self._end_kinds
        failed = self._failed
        if failed is not None and (ends is None or event.kind in ends) and failed(event):
            self.failed.append(index)

    def note_many(self, first: int, events: Sequence[Event]) -> None:
        """Lines ``first``.. (validated, in order) are ``events``: as
        :meth:`note` for each, at once (a run of regular lines: the rules
        asked for each line's call in one go, the arrays kept in locals)."""
        if first != len(self.call) or self.nests:
            for index, event in enumerate(events, first):
                self.note(index, event)
            return
        try:
            said = list(map(self._call_of, events))
        except Exception:  # optional rules code: a bug leaves its event alone
            for index, event in enumerate(events, first):
                self.note(index, event)
            return
        keys = [key if isinstance(key, str) else None for key in said]
        failed: list[int] = []
        ends_in_failure = self._failed
        if ends_in_failure is not None:  # as note(): only a line in a call ends one
            ends = self._end_kinds
            failed = [
                index
                for index, key, event in zip(count(first), keys, events)
                if key is not None
                and (ends is None or event.kind in ends)
                and ends_in_failure(event)
            ]
        self.note_keys(first, keys, failed)

    def note_keys(self, first: int, keys: Sequence[str | None], failed: Iterable[int]) -> None:
        """Lines ``first``.. (validated, in order) are of the calls ``keys``
        names (None: none), and the lines ``failed`` end theirs in failure:
        as :meth:`note` says of each, where calls do not nest (the rules'
        native twin said which call each line is part of)."""
        assert not self.nests
        calls = self.call
        if first > len(calls):  # not expected: lines come in order
            for index in range(len(calls), first):
                self._alone(index)
        skip = len(calls) - first  # lines noted already (a retry)
        if skip > 0:
            keys = keys[skip:]
            failed = [at for at in failed if at >= first + skip]
            first += skip
        numbers = self._numbers
        following, rows = self._next, self.rows
        firsts, last, lines = self.first, self.last, self.count
        for index, key in zip(count(first), keys):
            if key is None:
                calls.append(NO_CALL)
                following.append(NO_CALL)
                rows.append(index)
                continue
            number = numbers.get(key)
            if number is None:  # as note(): counted once every entry is there
                number = numbers[key] = len(firsts)
                self.keys.append(key)
                firsts.append(index)
                last.append(index)
                lines.append(1)
                self.parent.append(NO_CALL)
                self.children.append(0)
                self._placed.append(0)
                calls.append(number)
                following.append(NO_CALL)
                rows.append(index)
                self._calls = number + 1
            else:
                following[last[number]] = index
                last[number] = index
                lines[number] += 1
                calls.append(number)
                following.append(NO_CALL)
        if self._failed is not None:
            self.failed.extend(failed)

    def _note_parent(self, number: int, index: int, event: Event) -> None:
        """Call ``number`` starts at line ``index``: where calls nest, its
        parent is the call the rules name (``call_parent``), or else the call
        of the line its ``parent_seq`` names (seq n is line n-1 once
        validated); calls that were waiting for it go inside it."""
        self.parent.append(NO_CALL)
        self.children.append(0)
        self._placed.append(0)
        if not self.nests:
            return
        ts = getattr(event, "ts_s", None)
        self.start.append(ts if isinstance(ts, float) else math.nan)
        if self._parent_of is not None:
            self._place_by_name(number, event)
            waiting = self._waiting.pop(self.keys[number], ())
            self.awaiting -= len(waiting)
            for child in waiting:
                self._set_parent(child, number)
            return
        seq = getattr(event, "parent_seq", None)
        if isinstance(seq, int) and not isinstance(seq, bool) and 0 < seq <= index:
            parent = self.call[seq - 1]
            if parent != NO_CALL:
                self._set_parent(number, parent)

    def _place_by_name(self, number: int, event: Event) -> None:
        """The rules name call ``number``'s parent on ``event``: it goes
        inside that call, or waits for it to start."""
        try:
            name = self._parent_of(event)  # type: ignore[misc]
        except Exception:  # optional rules code: a bug leaves the call a root
            name = None
        if not isinstance(name, str):
            return
        self._placed[number] = 1
        up = self._numbers.get(name)
        if up is None:
            self._waiting.setdefault(name, []).append(number)
            self.awaiting += 1
        elif up != number:
            self._set_parent(number, up)

    def _set_parent(self, child: int, up: int) -> None:
        """Call ``child`` (a root so far) is inside call ``up``, unless
        ``up`` is inside ``child`` (a loop of parent links): then it stays a root."""
        parent = self.parent
        if self.children[child]:  # only a call with children can be an ancestor
            at = up
            while at != NO_CALL:
                if at == child:
                    return
                at = parent[at]
        parent[child] = up
        self.children[up] += 1
        self.nested += 1

    def _alone(self, index: int) -> None:
        self.call.append(NO_CALL)
        self._next.append(NO_CALL)
        self.rows.append(index)

    def call_at(self, index: int) -> int:
        """The call line ``index`` is part of (NO_CALL: none, or not yet noted)."""
        return self.call[index] if 0 <= index < len(self.call) else NO_CALL

    def lines(self, number: int, limit: int | None = None) -> Iterator[int]:
        """The lines of call ``number``, first to last (at most ``limit``)."""
        index = self.first[number]
        seen = 0
        # a line being noted by the forward pass has no next yet: stop there
        while index != NO_CALL and index < len(self._next) and (limit is None or seen < limit):
            yield index
            seen += 1
            index = self._next[index]

    @property
    def calls(self) -> int:
        """Calls noted so far (each with all its per-call entries)."""
        return self._calls
