"""The forward pass: every line checked, the rules run, once, in order.

This is the hot path (``check`` is this and little else): runs of regular
lines are proved and applied at once (:mod:`.regular_runs`); any other line
goes through :meth:`ForwardPass._consume`; with a state store each event is
:meth:`~.rules_step.RulesStep._next_in_history`. The pass is a part the
replay holds (:attr:`Replay.forward <replay_tui.engine.replay.Replay>`),
given the run's state as ``run``; per event it reads that state's
attributes from locals taken once a line or a group (no helper objects, no
extra calls per event).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from contextlib import suppress
from typing import Self

from replay_tui.core.allocator import collector_paused
from replay_tui.core.errors import ReplayError
from replay_tui.engine.follow import Following
from replay_tui.engine.regular_runs import RegularRuns
from replay_tui.engine.replay_core import ReplayCore
from replay_tui.engine.rules_step import AlreadyFailed, not_a_state
from replay_tui.formats.envelope import Event, LineError, parse_line
from replay_tui.formats.ledger import BIG_LINE, GZIP_MAGIC
from replay_tui.formats.receipts import ReceiptStore

#: The first rows are told after this many lines: the first screen need not
#: wait for a whole chunk.
FIRST_PROGRESS = 64


class ForwardPass(RegularRuns):
    """Reading the ledger forward: validate each line, apply it, judge the end."""

    def __init__(self, run: ReplayCore, follow: Following) -> None:
        super().__init__(run)
        self.follow = follow

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
        run = self.run
        count = 0
        with run._lock:
            run._advancing = True
        # No one reads a state until the pass ends: the rules may leave work
        # that gives no warning until then (with a store, each state is read).
        settle = run.history is None and run.observer is None and run.rules_call.settles
        run.ctx.settle_later = settle
        try:
            try:
                count = self._advance(progress, cancelled, every, limit)
            finally:
                if settle:
                    self._settle_rules()
                    run.ctx.settle_later = False
            history = run.history
            if history is not None:  # (the app's draft is its state from here)
                self.native.hand_over()
            journal = run._journal
            if journal is not None and history is not None and run.error is None:
                # the last state is the one shown first: frozen now, not
                # rebuilt from up to a few thousand patches on each ask
                # (kept, where patches are made again: the state they end at)
                if not history.made_again:
                    history.settle(run.valid, self._freeze_journal(journal))
                elif len(history) > history.last_kept()[0]:
                    with suppress(AlreadyFailed):
                        self._keep_journal(run.valid)
        finally:
            with run._lock:
                run._advancing = False
        return count

    def _advance(
        self,
        progress: Callable[[int], None] | None,
        cancelled: Callable[[], bool] | None,
        every: int,
        limit: int | None,
    ) -> int:
        # Lines indexed earlier but held back (a receipt was pending) go first.
        run = self.run
        while self._ready() and run._consumed < len(run.ledger):
            if limit is not None and run.valid >= limit:
                break
            index = run._consumed
            self._consume_line(index, run.ledger.raw_line(index))
        count = 0
        for first, lines in run.ledger.scan_chunks():
            count += len(lines)
            pos = 0
            while pos < len(lines):
                # the first rows are told soon; then every ``every`` lines, and
                # at least once a chunk (a 4 MiB read: a session's few hundred)
                size = FIRST_PROGRESS if first + pos < FIRST_PROGRESS else every
                index = first + pos
                batch = lines[pos : pos + size]
                pos += len(batch)
                if self._ready() and index == run._consumed:
                    if limit is not None:
                        batch = batch[: max(0, limit - run.valid)]
                    self._consume_lines(index, batch)
                    if limit is not None and run.valid >= limit:
                        break
                if progress is not None:
                    progress(first + pos)
                if cancelled is not None and cancelled():
                    break
            else:
                continue
            break  # limit reached, or cancelled
        if progress is not None:
            progress(len(run.ledger))
        return count

    def _consume_lines(self, index: int, lines: list[bytes]) -> None:
        """Lines ``index``..: a chunk of regular envelope lines at once,
        anything else a line at a time.

        The cyclic collector is paused meanwhile: a chunk's objects are JSON
        values and events (no cycles), and it would only rescan them as they
        are made, some 14% of ``check``; cycles the rules make are collected
        once the chunk is done."""
        run = self.run
        if not lines:
            return
        with collector_paused():
            if run._parse is parse_line and index > 0 and not run.skip:
                self._consume_regular(index, lines)
                return
            self._consume_each(index, lines)

    def _consume_each(self, index: int, lines: list[bytes]) -> None:
        """Lines ``index``.., each judged alone, until the pass stops or waits."""
        for at, raw in enumerate(lines, index):
            if not self._ready():
                return
            self._consume_line(at, raw)

    def _ready(self) -> bool:
        run = self.run
        return run.error is None and run.pending is None

    def _consume_line(self, index: int, raw: bytes) -> None:
        run = self.run
        if index == 0 and raw.startswith(GZIP_MAGIC) and not run.ledger.compressed:
            run._consumed = 1
            run._fail(
                ReplayError(
                    "bad_encoding",
                    f"{run.ledger.path.name} is gzip-compressed: give it a .gz name (or put "
                    "it in the run folder as events.jsonl.gz) and replay-tui reads it, or "
                    "gunzip it",
                    line=1,
                    artifact=run.ledger.artifact(1),
                )
            )
            return
        if index == 0 and run.ledger.foreign_encoding:
            enc = run.ledger.foreign_encoding
            run._consumed = 1
            run._fail(
                ReplayError(
                    "bad_encoding",
                    f"{run.ledger.path.name} is {enc}, not UTF-8 (a PowerShell '>' redirect "
                    "writes UTF-16); convert it, e.g. iconv -f UTF-16 -t UTF-8",
                    line=1,
                    artifact=run.ledger.artifact(1),
                )
            )
            return
        valid_before = run.valid
        parsed = run._parse(raw, index + 1, run.ledger.line_span(index)[0])
        kept = None
        if run.clock is not None and len(raw) >= BIG_LINE and isinstance(parsed, Event):
            # in the app, shown next (its row, its view): a copy, before the
            # rules see it; check shows nothing, and keeps no second parse
            kept = parsed.detached()
        self._consume(parsed, raw)
        if kept is not None and isinstance(parsed, Event):
            kept.noted_from(parsed)  # what the checks found of it (its parent, its chain)
            run.ledger.keep_big(index, len(raw), kept)
        if run.valid > valid_before:
            run._crcs.append(zlib.crc32(raw))
        if run.pending is None:
            run._consumed = index + 1

    def finish(self) -> None:
        """The ledger is complete: judge an unterminated last line, warn of orphans.

        A last line without ``\\n`` that parses is accepted with a warning;
        one that does not is ``truncated_line``. (While following a growing
        file, do not call this: the line is simply not complete yet.)
        """
        run = self.run
        if run.finished:
            return
        self.follow.stop_following()
        self.advance()
        tail = run.ledger.tail()
        if tail and run.error is None:
            line = len(run.ledger) + 1
            offset = run.ledger.indexed_end
            raw = tail[:-1] if tail.endswith(b"\r") else tail
            parsed = run._parse(raw, line, offset)
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
            with run._lock:
                run._advancing = True
            try:
                run.ledger.accept_tail()
                if isinstance(parsed, Event):
                    run._warn("no_final_newline", "the last line has no newline", parsed.seq, line)
                valid_before = run.valid
                self._consume(parsed)
                if run.valid > valid_before:
                    run._crcs.append(zlib.crc32(raw))
            finally:
                with run._lock:
                    run._advancing = False
        elif tail:
            run.ledger.accept_tail()
        if run.error is None and len(run.ledger) == 0:
            name = run.ledger.path.name
            run._warn("empty_ledger", f"{name} has no events: nothing was replayed")
        if run.error is None:
            self._check_final_state()
        if run.error is None:
            for stem in run.receipts.stems():
                if stem not in run.calls_seen:
                    run._warn(
                        "orphan_receipt",
                        f"{ReceiptStore.name_of(stem)} is not referred to by any event",
                        artifact=ReceiptStore.name_of(stem),
                    )
        run.finished = True

    def _check_final_state(self) -> None:
        """The final state must be JSON and have a summary (short runs never
        reach a checkpoint, where this is otherwise checked)."""
        run = self.run
        state = run._final_view()
        try:
            digest = run._final_digest(state)
        except TypeError as exc:
            self._fail_not_json(str(exc))
            return
        word = run._summary_word(state)
        if word is not None:
            run._final = (run.valid, word, digest)

    def verify(self) -> Self:
        """Read the whole ledger as it is now and judge it (``check``)."""
        self.advance()
        self.finish()
        return self

    def _line_error(self, e: LineError) -> ReplayError:
        return ReplayError(
            e.code, e.message, e.seq, e.line, e.kind, self.run.ledger.artifact(e.line)
        )

    def _consume(self, item: Event | LineError, raw: bytes | None = None) -> None:
        run = self.run
        if isinstance(item, LineError):
            run._fail(self._line_error(item))
            return
        problem = run._checker.check(item)
        if problem is not None:
            run._fail(self._line_error(problem))
            return
        if run._checker.findings:
            self._take_findings(item)
        if item.parent_seq is not None:
            run.causes.note(item)
        if run.calls is not None:
            run.calls.note(item.line - 1, item)
        if item.kind not in run._late_ts_kinds and run._checker.ts_went_back(item):
            run._went_back(item.ts, item.seq, item.line)
        if run.clock is not None:
            # a kind whose ts may come late (a trace's records) leaves the
            # checker's last ts alone: its own ts is its time on the clock
            ts = item.ts_s if item.ts is not None else None
            run.clock.note(item.line - 1, ts if ts is not None else run._checker.last_ts)
        if run.run_id is None:
            run.run_id = item.run_id
        if item.seq in run.skip or item.kind not in run._checker.kinds:
            # left out of this branch, or passed only as ignorable: skipped
            with run._lock:
                if run.history is not None:
                    run.history.unchanged(item.seq)
                run.valid = item.seq
            if run.history is not None and run.history.due():
                self._keep_journal(item.seq)
            if run.observer is not None:
                journal = run._journal
                state = journal.root if journal is not None else run._live_state()
                run.observer(item.seq, state, item.kind)
            return
        cid = item.payload.get("call_id")
        if isinstance(cid, str):
            if "receipt_sha256" in item.payload:
                run.calls_seen[cid] = item.line - 1
            else:
                run.calls_seen.setdefault(cid, -1)
        saved_ts = run._checker.last_ts
        run.ctx.warnings.clear()  # anything a rebuild with this ctx said
        try:
            if run._native is not None and raw is not None and self.native.apply_line(item, raw):
                if self.native.keep_due():
                    self._keep_journal(item.seq)
                return
            if run.history is not None:
                self._next_in_history(item)
                return
            state = run._state if run._state is not None else run._live_state()
            new = run.apply_rules(state, item, run.ctx)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            self._rules_raised(item, exc, saved_ts)
            return
        if not isinstance(new, dict):
            self._fail_at(item, not_a_state(new))
            return
        with run._lock:
            run._state = new
            run.valid = item.seq
            if run.checkpoints.due(run.valid):
                try:
                    if not run.ctx.settle_later or self._settle_rules():
                        run.checkpoints.keep(run.valid, new)
                except TypeError as exc:
                    self._fail_not_json(str(exc))
        self._rule_warnings(item)
        if run.observer is not None and run.error is None:
            run.observer(item.seq, new, item.kind)

    def _take_findings(self, item: Event) -> None:
        """What the line checks found at ``item`` that is no stop, as warnings."""
        run = self.run
        findings = run._checker.findings
        for code, message in findings:
            run._warn(code, message, item.seq, item.line)
        findings.clear()
