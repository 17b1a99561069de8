"""The forward pass: every line checked, the rules run, once, in order.

This is the hot path (``check`` is this and little else): a regular chunk
of lines is checked at once (:mod:`replay_tui.formats.chunks`) and its
events applied by :meth:`ForwardPass._apply_regular`; any other line goes
through :meth:`ForwardPass._consume`; with a state store each event is
:meth:`~.rules_step.RulesStep._next_in_history`. They read the replay's own
attributes directly; keep it that way (no helper objects, no extra calls
per event).
"""

from __future__ import annotations

import gc
import threading
import zlib
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING, Self

from replay_tui.core.errors import ReplayError
from replay_tui.engine.rules_step import NotAState, RulesStep, not_a_state
from replay_tui.formats.chunks import Regular, proven_events, regular_events
from replay_tui.formats.envelope import MAX_DEPTH, Event, LineError, parse_line, ts_seconds
from replay_tui.formats.ledger import BIG_LINE, GZIP_MAGIC
from replay_tui.formats.line_core import NATIVE, NativeCore, Proof
from replay_tui.formats.receipts import ReceiptStore
from replay_tui.reducers.base import State
from replay_tui.state import canonical

#: The first rows are told after this many lines: the first screen need not
#: wait for a whole chunk.
FIRST_PROGRESS = 64
#: Lines the native core proved are made events and applied this many at a time.
PROVEN_GROUP = 512


class ForwardPass(RulesStep):
    """Reading the ledger forward: validate each line, apply it, judge the end."""

    if TYPE_CHECKING:

        def stop_following(self) -> None: ...  # from Following

    @property
    def line_core(self) -> str:
        """Which path proves this history's lines: ``native`` (the compiled
        line core, for envelope ledgers when it is found) or ``python``."""
        return "native" if NATIVE is not None and self._parse is parse_line else "python"

    def advance(
        self,
        *,
        progress: Callable[[int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        every: int = 8192,
        limit: int | None = None,
    ) -> int:
        """Check and apply the complete lines appended since the last call.

        After an error, lines are still indexed (so they can be shown) but
        not replayed. With ``limit``, stop once that many events are valid
        (``state --at N`` need not read past N). Returns the lines indexed.
        """
        count = 0
        with self._lock:
            self._advancing = True
        # No one reads a state until the pass ends: the rules may leave work
        # that gives no warning until then (with a store, each state is read).
        settle = self.history is None and self.observer is None and self.rules_call.settles
        self.ctx.settle_later = settle
        try:
            try:
                count = self._advance(progress, cancelled, every, limit)
            finally:
                if settle:
                    self._settle_rules()
                    self.ctx.settle_later = False
            journal = self._journal
            if journal is not None and self.history is not None:
                # the last state is the one shown first: frozen now, not
                # rebuilt from up to a few thousand patches on each ask
                self.history.settle(self.valid, self._freeze_journal(journal))
        finally:
            with self._lock:
                self._advancing = False
        return count

    def _settle_rules(self) -> bool:
        """Let the rules finish the live state (``Context.settle_later``):
        before a checkpoint of it, and at the end of the pass. False if they
        raised: the run then stops where a pass that reads every state would
        (never a crash)."""
        state = self._state
        if state is None or self.error is not None:
            return True
        try:
            self.rules_call.settle(state, self.ctx)
            return True
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a bug in the rules
            self._fail_where_raised(None, exc)  # (it turns settle_later off)
            return False

    def _advance(
        self,
        progress: Callable[[int], None] | None,
        cancelled: Callable[[], bool] | None,
        every: int,
        limit: int | None,
    ) -> int:
        # Lines indexed earlier but held back (a receipt was pending) go first.
        while self._ready() and self._consumed < len(self.ledger):
            if limit is not None and self.valid >= limit:
                break
            index = self._consumed
            self._consume_line(index, self.ledger.raw_line(index))
        count = 0
        for first, lines in self.ledger.scan_chunks():
            count += len(lines)
            pos = 0
            while pos < len(lines):
                # the first rows are told soon; then every ``every`` lines, and
                # at least once a chunk (a 4 MiB read: a session's few hundred)
                size = FIRST_PROGRESS if first + pos < FIRST_PROGRESS else every
                index = first + pos
                batch = lines[pos : pos + size]
                pos += len(batch)
                if self._ready() and index == self._consumed:
                    if limit is not None:
                        batch = batch[: max(0, limit - self.valid)]
                    self._consume_lines(index, batch)
                    if limit is not None and self.valid >= limit:
                        break
                if progress is not None:
                    progress(first + pos)
                if cancelled is not None and cancelled():
                    break
            else:
                continue
            break  # limit reached, or cancelled
        if progress is not None:
            progress(len(self.ledger))
        return count

    def _consume_lines(self, index: int, lines: list[bytes]) -> None:
        """Lines ``index``..: a chunk of regular envelope lines at once,
        anything else a line at a time.

        The cyclic collector is paused meanwhile: a chunk's objects are JSON
        values and events (no cycles), and it would only rescan them as they
        are made, some 14% of ``check``; cycles the rules make are collected
        once the chunk is done."""
        if not lines:
            return
        collecting = gc.isenabled()
        gc.disable()
        try:
            if self._parse is parse_line and index > 0 and not self.skip:
                if NATIVE is not None:
                    self._consume_proven(index, lines, NATIVE)
                    return
                spans = self.ledger.line_offsets(index, len(lines))
                regular = regular_events(
                    lines,
                    index + 1,
                    spans,
                    last_seq=self._checker.last_seq,
                    run_id=self._checker.run_id,
                    last_ts=self._checker.last_ts,
                    kinds=self._chunk_kinds,
                )
                if regular is not None and (self.clock is None or max(map(len, lines)) < BIG_LINE):
                    self._apply_regular(index, lines, regular)
                    return
            for at, raw in enumerate(lines, index):
                if not self._ready():
                    break
                self._consume_line(at, raw)
        finally:
            if collecting:
                gc.enable()

    def _consume_proven(self, index: int, lines: list[bytes], core: NativeCore) -> None:
        """Lines ``index``..: the runs of regular lines the native core
        proves applied at once, each line it does not prove judged alone,
        then the next run."""
        buf = b"\n".join(lines) + b"\n"
        checker = self._checker
        big = BIG_LINE if self.clock is not None else 0  # the app keeps big lines apart
        at = byte = 0
        n = len(lines)
        while at < n and self._ready():
            proof = core.prove(
                buf,
                byte,
                first_seq=checker.last_seq + 1,
                run_id=checker.run_id,
                kinds=self._chunk_kinds,
                max_depth=MAX_DEPTH - 1,
                max_lines=n - at,
                max_len=big,
            )
            if proof.lines:
                self._apply_proven(index + at, lines[at : at + proof.lines], proof, buf, core)
                at += proof.lines
                byte = proof.end
            if at < n and self._ready():
                self._consume_line(index + at, lines[at])
                byte += len(lines[at]) + 1
                at += 1

    def _apply_proven(
        self, index: int, lines: list[bytes], proof: Proof, buf: bytes, core: NativeCore
    ) -> None:
        """Apply lines ``index``.. that the native core proved regular, a
        few hundred at a time: each group's events are made and applied
        while they are still in the processor's cache (a whole chunk's,
        made first, were read again from memory: 30% slower)."""
        checker = self._checker
        reading = self._read_receipts_ahead(buf, proof.pins, core)
        backs = proof.backs
        for sub in range(0, len(lines), PROVEN_GROUP):
            group = lines[sub : sub + PROVEN_GROUP]
            lo, hi = bisect_left(backs, sub + 1), bisect_left(backs, sub + len(group))
            regular = proven_events(
                group,
                index + sub + 1,
                self.ledger.line_offsets(index + sub, len(group)),
                first_seq=checker.last_seq + 1,
                run_id=checker.run_id,
                timed=proof.times,
                earlier=[b - sub for b in backs[lo:hi]],  # the first: against the last ts
                last_ts=checker.last_ts,
                compact_needed=self.guarded,
            )
            if reading is not None:
                reading.join()
                reading = None
            if regular is None:  # orjson reads them otherwise: a line at a time
                for at, raw in enumerate(group, index + sub):
                    if not self._ready():
                        return
                    self._consume_line(at, raw)
            else:
                self._apply_regular(index + sub, group, regular)
            if not self._ready():
                return

    def _read_receipts_ahead(
        self, buf: bytes, pins: list[int], core: NativeCore
    ) -> threading.Thread | None:
        """Read the receipts the proven lines pin on another thread (the
        native reader lets go of the interpreter's lock) while their events
        are made; not while following (a receipt may be being written)."""
        if not pins or self.ctx.following or not self.receipts.enabled:
            return None
        cids = [buf[start:end].decode() for start, end in zip(pins[::2], pins[1::2], strict=True)]
        reading = threading.Thread(
            target=self.receipts.read_ahead, args=(cids, core.read_files), daemon=True
        )
        reading.start()
        return reading

    def _ready(self) -> bool:
        return self.error is None and self.pending is None

    def _consume_line(self, index: int, raw: bytes) -> None:
        if index == 0 and raw.startswith(GZIP_MAGIC) and not self.ledger.compressed:
            self._consumed = 1
            self._fail(
                ReplayError(
                    "bad_encoding",
                    f"{self.ledger.path.name} is gzip-compressed: give it a .gz name (or put "
                    "it in the run folder as events.jsonl.gz) and replay-tui reads it, or "
                    "gunzip it",
                    line=1,
                    artifact=self.ledger.artifact(1),
                )
            )
            return
        if index == 0 and self.ledger.foreign_encoding:
            enc = self.ledger.foreign_encoding
            self._consumed = 1
            self._fail(
                ReplayError(
                    "bad_encoding",
                    f"{self.ledger.path.name} is {enc}, not UTF-8 (a PowerShell '>' redirect "
                    "writes UTF-16); convert it, e.g. iconv -f UTF-16 -t UTF-8",
                    line=1,
                    artifact=self.ledger.artifact(1),
                )
            )
            return
        valid_before = self.valid
        parsed = self._parse(raw, index + 1, self.ledger.line_span(index)[0])
        kept = None
        if self.clock is not None and len(raw) >= BIG_LINE and isinstance(parsed, Event):
            # in the app, shown next (its row, its view): a copy, before the
            # rules see it; check shows nothing, and keeps no second parse
            kept = parsed.detached()
        self._consume(parsed)
        if kept is not None and isinstance(parsed, Event):
            kept.noted_from(parsed)  # what the checks found of it (its parent, its chain)
            self.ledger.keep_big(index, len(raw), kept)
        if self.valid > valid_before:
            self._crcs.append(zlib.crc32(raw))
        if self.pending is None:
            self._consumed = index + 1

    def finish(self) -> None:
        """The ledger is complete: judge an unterminated last line, warn of orphans.

        A last line without ``\\n`` that parses is accepted with a warning;
        one that does not is ``truncated_line``. (While following a growing
        file, do not call this: the line is simply not complete yet.)
        """
        if self.finished:
            return
        self.stop_following()
        self.advance()
        tail = self.ledger.tail()
        if tail and self.error is None:
            line = len(self.ledger) + 1
            offset = self.ledger.indexed_end
            raw = tail[:-1] if tail.endswith(b"\r") else tail
            parsed = self._parse(raw, line, offset)
            if isinstance(parsed, LineError) and parsed.code in (
                "bad_json",
                "bad_encoding",
                "blank_line",
            ):
                parsed = LineError(
                    "truncated_line",
                    f"the last line has no newline and is not complete JSON ({parsed.message})",
                    line,
                    offset,
                )
            with self._lock:
                self._advancing = True
            try:
                self.ledger.accept_tail()
                if isinstance(parsed, Event):
                    self._warn("no_final_newline", "the last line has no newline", parsed.seq, line)
                valid_before = self.valid
                self._consume(parsed)
                if self.valid > valid_before:
                    self._crcs.append(zlib.crc32(raw))
            finally:
                with self._lock:
                    self._advancing = False
        elif tail:
            self.ledger.accept_tail()
        if self.error is None and len(self.ledger) == 0:
            name = self.ledger.path.name
            self._warn("empty_ledger", f"{name} has no events: nothing was replayed")
        if self.error is None:
            self._check_final_state()
        if self.error is None:
            for stem in self.receipts.stems():
                if stem not in self.calls_seen:
                    self._warn(
                        "orphan_receipt",
                        f"{ReceiptStore.name_of(stem)} is not referred to by any event",
                        artifact=ReceiptStore.name_of(stem),
                    )
        self.finished = True

    def _check_final_state(self) -> None:
        """The final state must be JSON and have a summary (short runs never
        reach a checkpoint, where this is otherwise checked)."""
        state = self._live_state()
        try:
            digest = canonical.digest(state)
        except TypeError as exc:
            self._fail_not_json(str(exc))
            return
        word = self._summary_word(state)
        if word is not None:
            self._final = (self.valid, word, digest)

    def verify(self) -> Self:
        """Read the whole ledger as it is now and judge it (``check``)."""
        self.advance()
        self.finish()
        return self

    def _line_error(self, e: LineError) -> ReplayError:
        return ReplayError(e.code, e.message, e.seq, e.line, e.kind, self.ledger.artifact(e.line))

    def _apply_regular(self, index: int, lines: list[bytes], regular: Regular) -> None:
        """Apply a chunk :func:`regular_events` proved regular: per event only
        the rules and what they need (the call ids seen, the indexes the app
        keeps); ``valid`` and the state published once, at the end."""
        checker = self._checker
        events = regular.events
        ctx = self.ctx
        ctx.warnings.clear()
        history = self.history
        calls = self.calls
        clock = self.clock
        observer = self.observer
        calls_seen = self.calls_seen
        # built-in rules are called as they are (RulesCaller.apply would only pass it on)
        apply = self.rules_call.reducer.apply if not self.guarded else self.rules_call.apply
        # watched rules: a compact line is the event's bytes before the call
        by_line = self.guarded and regular.compact
        apply_line = self.rules_call.apply_line
        checkpoints = self.checkpoints
        due = checkpoints.next_due
        seconds = (
            list(map(ts_seconds, regular.times)) if clock is not None and regular.times else None
        )
        state = None
        if history is None:
            state = self._state if self._state is not None else self._live_state()
        if self.run_id is None:
            self.run_id = events[0].run_id
        done = 0
        watching = False
        saved_ts = checker.last_ts  # the last ts before the chunk
        backs = iter(regular.backs)
        back = next(backs, -1)
        try:
            for item, cid, raw in zip(events, regular.call_ids, lines, strict=True):
                if done == back:
                    self._warn(
                        "ts_backwards",
                        f"ts {item.ts} is earlier than the event before",
                        item.seq,
                        item.line,
                    )
                    back = next(backs, -1)
                if calls is not None:
                    calls.note(item.line - 1, item)
                if clock is not None:
                    clock.note(item.line - 1, seconds[done] if seconds is not None else saved_ts)
                if cid is not None:
                    if "receipt_sha256" in item.payload:
                        calls_seen[cid] = item.line - 1
                    else:
                        calls_seen.setdefault(cid, -1)
                if history is not None:
                    self._next_in_history(item)
                else:
                    new = (
                        apply_line(state, item, ctx, raw)  # type: ignore[arg-type]
                        if by_line
                        else apply(state, item, ctx)  # type: ignore[arg-type]
                    )
                    if type(new) is not dict and not isinstance(new, dict):
                        raise NotAState(not_a_state(new))
                    state = new
                    if item.seq >= due:
                        if not self._keep_checkpoint(item.seq, index, lines, done, state):
                            return
                        due = checkpoints.next_due
                    if ctx.warnings:
                        self._rule_warnings(item)
                    if observer is not None:
                        self.valid = item.seq
                        watching = True
                        observer(item.seq, state, item.kind)  # what it raises is its own
                        watching = False
                done += 1
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            if watching:
                self._settle_chunk(index, lines, done + 1, state, regular)
                raise
            item = events[done]
            self._settle_chunk(index, lines, done, state, regular)
            saved_ts = checker.last_ts
            checker.last_seq = item.seq
            if item.ts is not None:
                checker.last_ts = item.ts_s
            self._rules_raised(item, exc, saved_ts)
            return
        self._settle_chunk(index, lines, done, state, regular)

    def _keep_checkpoint(
        self, seq: int, index: int, lines: list[bytes], done: int, state: State
    ) -> bool:
        """A checkpoint after ``seq``, event ``done`` of the chunk from line
        ``index``; False (and the error found) if the state is not JSON."""
        with self._lock:
            self._state = state
            self.valid = seq
            why = None
            try:
                if not self.ctx.settle_later or self._settle_rules():
                    self.checkpoints.keep(seq, state)
                    return True
            except TypeError as exc:
                why = str(exc)
            self._crcs.extend(map(zlib.crc32, lines[: done + 1]))
            self._consumed = index + done + 1
            if why is not None:
                self._fail_not_json(why)
            return False

    def _settle_chunk(
        self, index: int, lines: list[bytes], done: int, state: State | None, regular: Regular
    ) -> None:
        """The first ``done`` events of a regular chunk are valid: say so, and
        where the line checks go on from."""
        self._crcs.extend(map(zlib.crc32, lines[:done]))
        self._consumed = index + done
        if not done:
            return
        last = regular.events[done - 1]
        self._checker.last_seq = last.seq
        if regular.times is not None:
            self._checker.last_ts = last.ts_s
        if self.history is None:
            with self._lock:
                self._state = state
                self.valid = last.seq

    def _consume(self, item: Event | LineError) -> None:
        if isinstance(item, LineError):
            self._fail(self._line_error(item))
            return
        problem = self._checker.check(item)
        if problem is not None:
            self._fail(self._line_error(problem))
            return
        if self._checker.findings:
            self._take_findings(item)
        if item.parent_seq is not None:
            self.causes.note(item)
        if self.calls is not None:
            self.calls.note(item.line - 1, item)
        if item.kind not in self._late_ts_kinds and self._checker.ts_went_back(item):
            self._warn(
                "ts_backwards",
                f"ts {item.ts} is earlier than the event before",
                item.seq,
                item.line,
            )
        if self.clock is not None:
            # a kind whose ts may come late (a trace's records) leaves the
            # checker's last ts alone: its own ts is its time on the clock
            ts = item.ts_s if item.ts is not None else None
            self.clock.note(item.line - 1, ts if ts is not None else self._checker.last_ts)
        if self.run_id is None:
            self.run_id = item.run_id
        if item.seq in self.skip or item.kind not in self._checker.kinds:
            # left out of this branch, or passed only as ignorable: skipped
            with self._lock:
                if self.history is not None:
                    self.history.record(item.seq, [])
                self.valid = item.seq
            if self.history is not None and self.history.due():
                self._keep_journal(item.seq)
            if self.observer is not None:
                journal = self._journal
                state = journal.root if journal is not None else self._live_state()
                self.observer(item.seq, state, item.kind)  # type: ignore[arg-type]
            return
        cid = item.payload.get("call_id")
        if isinstance(cid, str):
            if "receipt_sha256" in item.payload:
                self.calls_seen[cid] = item.line - 1
            else:
                self.calls_seen.setdefault(cid, -1)
        saved_ts = self._checker.last_ts
        self.ctx.warnings.clear()  # anything a rebuild with this ctx said
        try:
            if self.history is not None:
                self._next_in_history(item)
                return
            state = self._state if self._state is not None else self._live_state()
            new = self.apply_rules(state, item, self.ctx)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            self._rules_raised(item, exc, saved_ts)
            return
        if not isinstance(new, dict):
            self._fail_at(item, not_a_state(new))
            return
        with self._lock:
            self._state = new
            self.valid = item.seq
            if self.checkpoints.due(self.valid):
                try:
                    if not self.ctx.settle_later or self._settle_rules():
                        self.checkpoints.keep(self.valid, new)
                except TypeError as exc:
                    self._fail_not_json(str(exc))
        self._rule_warnings(item)
        if self.observer is not None and self.error is None:
            self.observer(item.seq, new, item.kind)

    def _take_findings(self, item: Event) -> None:
        """What the line checks found at ``item`` that is no stop, as warnings."""
        findings = self._checker.findings
        for code, message in findings:
            self._warn(code, message, item.seq, item.line)
        findings.clear()
