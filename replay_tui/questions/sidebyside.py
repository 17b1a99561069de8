"""Two histories side by side: two runs, one run under two versions of its
rules, or a run and a hypothetical branch of it that leaves events out.

"Why did this run fail when the same task passed yesterday?" is answered with
*where* they part, not only *that* they do: the first seq whose events differ
and the first prefix whose states differ, with what differs there.

Each side is replayed strictly in a process of its own (two cores: both at
once). The side sends back, per event, an 8-byte digest of the event (its
kind, payload and parent; ``run_id`` and ``ts`` only with ``strict_events``)
and, when the rules differ, of what the event changed in canonical form
(see :mod:`replay_tui.questions.parting`: from equal states, equal changes
give equal states). Where those first differ, the two states' digests are
compared to confirm it. The side then stays up to hand over the two states
and events there.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
from collections.abc import Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.words import plural
from replay_tui.engine.open import open_replay
from replay_tui.formats.envelope import Event
from replay_tui.formats.sessions import SessionLines
from replay_tui.questions.parting import change_digest, change_log, same_changes, state_digest
from replay_tui.state import canonical
from replay_tui.state.diff import diff
from replay_tui.state.persistent import thaw

#: The digest of an event a branch leaves out: differs from any event's.
LEFT_OUT = b"\xff" * 8
_CHUNK = 65536


@dataclass(frozen=True)
class Side:
    """What to replay on one side."""

    run: str
    reducer: str | None = None
    fmt: str = "auto"
    skip: tuple[int, ...] = ()
    strict_events: bool = False
    rules_timeout: float = 10.0

    @property
    def hypothetical(self) -> bool:
        return bool(self.skip)

    def label(self) -> str:
        """``hypothetical: without seq 2`` for a branch, else empty."""
        return f"hypothetical: {without(self.skip)}" if self.skip else ""


def without(skip: Iterable[int]) -> str:
    """``without seq 2, 5``: how a branch is named wherever it is spoken of."""
    return "without seq " + ", ".join(str(s) for s in sorted(skip))


def skip_seqs(values: Iterable[int]) -> tuple[int, ...]:
    """``--skip`` given as seqs: sorted, each once; raises CannotRun below 1."""
    seqs = tuple(sorted(set(values)))
    if seqs and seqs[0] < 1:
        raise CannotRun(f"--skip {seqs[0]}: events are numbered from 1")
    return seqs


def past_the_end(skip: Iterable[int], lines: int) -> str | None:
    """Why ``--skip`` names an event the run does not have (its ledger has
    ``lines`` lines), or None: a branch without it would be the run itself."""
    past = sorted(s for s in skip if s > lines)
    if not past:
        return None
    return f"--skip {past[0]}: seq {past[0]} is past the end of the run ({plural(lines, 'event')})"


@dataclass
class Trace:
    """One side, replayed: its report, verdict line and per-event digests."""

    report: dict[str, Any]
    verdict: str
    valid: int
    initial: str
    events: bytes
    patches: bytes
    extra: dict[str, Any] = field(default_factory=dict)


def _event_digest(
    raw: bytes, strict: bool, reads: tuple[Any, ...] = (), mapping: SessionLines | None = None
) -> bytes:
    """A line's event as compared: kind, payload, parent and version (the
    whole line with ``strict``), and the receipts the rules read for it; a
    line that is not an event, its bytes. A session's record (``mapping``)
    is compared by its kind and the record without its ids and times."""
    if strict:
        data = raw
    else:
        try:
            obj = strict_json.loads_written(raw)
        except orjson.JSONDecodeError:
            obj = None
        if not isinstance(obj, dict):
            return hashlib.blake2b(raw, digest_size=8).digest()
        if mapping is not None:
            key = mapping.compare_key(obj)
        else:
            key = [obj.get("kind"), obj.get("payload", {}), obj.get("parent_seq"), obj.get("v", 1)]
        data = strict_json.dumps(key, option=orjson.OPT_SORT_KEYS)
    if reads:
        data += strict_json.dumps(reads)
    return hashlib.blake2b(data, digest_size=8).digest()


def _state_digest(state: Any) -> bytes:
    return hashlib.blake2b(canonical.dumps(state), digest_size=8).digest()


def _budget_digest(replay: Any) -> str:
    path = replay.paths.dir / "budget.json"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
    except OSError:
        return "unreadable"


def _side_main(side: Side, conn: Connection, keep_patches: bool) -> None:
    """In the side's own process: replay, send the :class:`Trace`, then answer
    ``("state", n)``, ``("event", seq)`` and ``("walk", n, count)`` until
    ``None``.

    Without ``keep_patches`` the replay is ``check``'s (plain states, as
    fast); each event's digest then also holds the receipts the rules read,
    so equal digests mean equal inputs to equal rules, and the parent walks
    on from where the events part. With it, each event's patches are
    digested too (rules that differ part anywhere)."""
    from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET

    keep: dict[str, Any] = (
        {"history": True} if keep_patches else {"checkpoint_budget": CHECK_CHECKPOINT_BUDGET}
    )
    try:
        replay, dog = open_replay(
            side.run,
            side.reducer,
            timeout=side.rules_timeout,
            fmt=side.fmt,
            skip=side.skip,
            **keep,
        )
    except CannotRun as exc:
        conn.send({"cannot": str(exc)})
        return
    except Exception as exc:  # never a traceback across the pipe
        conn.send({"cannot": f"{type(exc).__name__}: {exc}"})
        return
    try:
        reads = _record_reads(replay)
        replay.verify()
        past = past_the_end(side.skip, len(replay.ledger))
        if past is not None:
            conn.send({"cannot": past})
            return
        conn.send(_trace(replay, side, reads, keep_patches))
        _serve(replay, conn)
    finally:
        if dog is not None:
            dog.stop()
        replay.close()
        conn.close()


def _record_reads(replay: Any) -> dict[int, tuple[Any, ...]]:
    """Have ``replay`` note, by seq, the receipts its rules read for each event
    (filled in as it replays)."""
    reads: dict[int, tuple[Any, ...]] = {}
    log: list[tuple[str, str]] = []
    replay.ctx.receipt_log = log

    def observe(seq: int, state: Any, kind: str) -> None:
        if log:
            reads[seq] = tuple(log)
            log.clear()

    replay.observer = observe
    return reads


def _line_digests(
    replay: Any, side: Side, reads: dict[int, tuple[Any, ...]]
) -> tuple[bytes, bytes]:
    """Per ledger line: the event's digest as compared, and the digest of its
    inputs (the event and the receipts the rules read for it)."""
    events = bytearray()  # every line: a rules failure does not change the events
    inputs = bytearray()  # and with the receipts the rules read for them
    for index in range(len(replay.ledger)):
        if index + 1 in replay.skip:
            events += LEFT_OUT
            inputs += LEFT_OUT
            continue
        raw = replay.ledger.raw_line(index)
        mapping = replay.ledger.mapping
        events += _event_digest(raw, side.strict_events, mapping=mapping)
        read = reads.get(index + 1)
        inputs += _event_digest(raw, False, read or (), mapping)
    return bytes(events), bytes(inputs)


def _change_digests(replay: Any) -> bytes:
    """Per valid event, the digest of what it changed, in canonical form: from
    the patch log, or for rules without drafts from the states around it."""
    digests = bytearray()
    with change_log(replay) as log:
        assert log is not None  # nothing cancels it here
        for first in range(1, replay.valid + 1, _CHUNK):
            last = min(replay.valid, first + _CHUNK - 1)
            data, starts = log.span(first, last)
            for k in range(last - first + 1):
                digests += change_digest(data[starts[k] : starts[k + 1]])
    return bytes(digests)


def _trace(replay: Any, side: Side, reads: dict[int, tuple[Any, ...]], keep_patches: bool) -> Trace:
    """The verified replay as the parent compares it."""
    from replay_tui.engine.report import build_report, human_summary

    report = build_report(replay)
    verdict = human_summary(replay.paths.name, replay, report).splitlines()[0]
    events, inputs = _line_digests(replay, side, reads)
    patches = _change_digests(replay) if keep_patches else b""
    initial = canonical.digest(replay.state_at(0))
    trace = Trace(report, verdict, replay.valid, initial, events, patches)
    trace.extra.update(
        inputs=inputs,
        lines=len(replay.ledger),
        rules=replay.rules.rules_sha256,
        budget=_budget_digest(replay),
    )
    return trace


def _serve(replay: Any, conn: Connection) -> None:
    """Answer the parent's ``("state", n)``, ``("digest", n)``, ``("event",
    seq)`` and ``("walk", n, count)`` until it sends ``None``."""
    walk: Any = None
    walk_at = -1
    while True:
        ask = conn.recv()
        if ask is None:
            break
        what, n = ask[0], ask[1]
        if what == "state":
            conn.send(canonical.dumps(replay.state_at(n)))
        elif what == "digest":
            conn.send(strict_json.dumps(state_digest(replay, n).hex()))
        elif what == "walk":  # digests of the states after n+1 .. n+count
            count = ask[2]
            if walk is None or walk_at != n:
                walk = replay.iter_states(replay.valid, start=n)
                next(walk)
            found = []
            for _, state in walk:
                found.append(_state_digest(state))
                if len(found) == count:
                    break
            walk_at = n + len(found)
            conn.send(b"".join(found))
        else:
            event = replay.event(n - 1)
            conn.send(
                strict_json.dumps(shown_event(replay, event), default=str)
                if isinstance(event, Event)
                else b"null"
            )


def shown_event(replay: Any, event: Event) -> dict[str, Any]:
    """An event as ``diff`` shows it: its line's fields, or for a session's
    record (which has no envelope) ``{"seq", "kind", "payload": record}``."""
    if replay.ledger.mapping is None:
        return event.fields
    return {"seq": event.seq, "kind": event.kind, "payload": event.fields}


def _first_mismatch(a: bytes | memoryview, b: bytes | memoryview, width: int = 8) -> int | None:
    """Index of the first ``width``-byte slot that differs in the common
    length (binary search over C-level slice compares), else None."""
    n = min(len(a), len(b)) // width
    if a[: n * width] == b[: n * width]:
        return None
    lo, hi = 0, n  # the first difference is in slots lo..hi-1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo * width : mid * width] == b[lo * width : mid * width]:
            lo = mid
        else:
            hi = mid
    return lo


class _Running:
    """A side's process and the end of its pipe."""

    def __init__(self, side: Side, keep_patches: bool) -> None:
        ctx = multiprocessing.get_context("spawn")  # no threads or locks carried over
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_side_main, args=(side, child, keep_patches), daemon=True)
        self.process.start()
        child.close()

    def trace(self) -> Trace:
        try:
            got = self.conn.recv()
        except EOFError:
            raise CannotRun("a side's replay ended without an answer") from None
        if isinstance(got, dict):
            raise CannotRun(got["cannot"])
        return got  # type: ignore[no-any-return]

    def ask(self, what: str, n: int) -> Any:
        self.conn.send((what, n))
        return strict_json.loads_written(self.conn.recv())

    def walk(self, n: int, count: int) -> None:
        """Ask for the digests of this side's states after n+1 .. n+count."""
        self.conn.send(("walk", n, count))

    def walked(self) -> bytes:
        return self.conn.recv()  # type: ignore[no-any-return]

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()


#: States walked on from where two runs' inputs part, a step at a time, before
#: ``diff`` gives up walking and replays both keeping patches instead.
WALK_LIMIT = 8192
_WALK = 256


def side_by_side(a: Side, b: Side) -> dict[str, Any]:
    """Replay both (at once) and say where they part: see the module doc.

    ``first_event_difference`` is ``{"seq", "a", "b"}`` (each side's event,
    null where it has none), ``first_state_difference`` ``{"seq", "a_state",
    "b_state"}`` (whether each side has a state there: a replay that stopped
    has none); either is None when it never happens. ``changes`` are the
    state's changes from A to B at that prefix.

    With the same rules and budget on both sides, each is replayed as
    ``check`` replays (as fast): until their inputs (events, and the
    receipts the rules read) part, their states cannot, and from there the
    two walk on together comparing state digests. Otherwise (other rules),
    or when that walk runs long, both keep their patch logs, whose first
    difference is the first state difference.
    """
    keep_patches = a.reducer != b.reducer
    while True:
        left, right = _Running(a, keep_patches), _Running(b, keep_patches)
        try:
            result = _compare(a, b, left, right, keep_patches)
        finally:
            left.stop()
            right.stop()
        if result is not None:
            return result
        keep_patches = True  # the fast way could not tell: the sure way


def _compare(
    a: Side, b: Side, left: _Running, right: _Running, keep_patches: bool
) -> dict[str, Any] | None:
    ta, tb = left.trace(), right.trace()
    if not keep_patches and (
        ta.extra["rules"] != tb.extra["rules"]
        or ta.extra["budget"] != tb.extra["budget"]
        or ta.initial != tb.initial
    ):
        return None
    lines_a, lines_b = ta.extra["lines"], tb.extra["lines"]
    event_at = _first_mismatch(ta.events, tb.events)
    if event_at is None and lines_a != lines_b:
        event_at = min(lines_a, lines_b)  # one ledger ends there
    first_event = None
    if event_at is not None:
        seq = event_at + 1
        first_event = {
            "seq": seq,
            "a": left.ask("event", seq) if seq <= lines_a and seq not in a.skip else None,
            "b": right.ask("event", seq) if seq <= lines_b and seq not in b.skip else None,
        }
    common = min(ta.valid, tb.valid)
    state_n: int | None
    if ta.initial != tb.initial:
        state_n = 0
    elif keep_patches:
        state_n = _confirmed(left, right, ta.patches, tb.patches)
    else:
        parted = _first_mismatch(ta.extra["inputs"][: common * 8], tb.extra["inputs"][: common * 8])
        state_n = None
        if parted is not None:  # the states are the same through seq `parted`
            pos = parted
            step = 1  # usually the very event where the inputs part: look there first
            while pos < common and state_n is None:
                if pos - parted >= WALK_LIMIT:
                    return None
                count = min(step, common - pos)
                step = min(step * 2, _WALK)
                left.walk(pos, count)
                right.walk(pos, count)
                differ = _first_mismatch(left.walked(), right.walked())
                if differ is not None:
                    state_n = pos + 1 + differ
                pos += count
    if state_n is None and ta.valid != tb.valid:
        state_n = common + 1  # one side's replay stopped there
    first_state = None
    changes: list[dict[str, Any]] = []
    if state_n is not None:
        has_a, has_b = state_n <= ta.valid, state_n <= tb.valid
        first_state = {"seq": state_n, "a_state": has_a, "b_state": has_b}
        if has_a and has_b:
            before = left.ask("state", state_n)
            after = right.ask("state", state_n)
            changes = [c.to_json() for c in diff(before, after)]
    same_verdict = _verdict_of(ta.report) == _verdict_of(tb.report)
    return {
        "same": first_event is None and first_state is None and same_verdict,
        "first_event_difference": first_event,
        "first_state_difference": first_state,
        "a": ta.report,
        "b": tb.report,
        "changes": changes,
        "verdicts": {"a": ta.verdict, "b": tb.verdict},
        **(
            {"hypothetical": True, "skipped": sorted(set(a.skip) | set(b.skip))}
            if a.hypothetical or b.hypothetical
            else {}
        ),
    }


def _confirmed(left: _Running, right: _Running, a: bytes, b: bytes) -> int | None:
    """The first n whose change digests differ and whose states' digests do
    too (the states decide where the changes alone would say otherwise)."""
    start = 0
    view_a, view_b = memoryview(a), memoryview(b)  # slices without copies
    while True:
        found = _first_mismatch(view_a[start * 8 :], view_b[start * 8 :])
        if found is None:
            return None
        n = start + found + 1
        if left.ask("digest", n) != right.ask("digest", n):
            return n
        start = n


def _verdict_of(report: dict[str, Any]) -> tuple[Any, Any]:
    """What must match for two verdicts to be the same: the error's code and seq."""
    error = report.get("error")
    return (error.get("code"), error.get("seq")) if error else (None, None)


# -- in the app: two replays in one process ------------------------------------


def event_digest_at(replay: Any, index: int, strict: bool) -> bytes:
    """Line ``index``'s event as compared (LEFT_OUT if the replay skips it)."""
    if index + 1 in replay.skip:
        return LEFT_OUT
    return _event_digest(replay.ledger.raw_line(index), strict, mapping=replay.ledger.mapping)


def row_differences(a: Any, b: Any, *, strict: bool = False, cancelled: Any = None) -> list[int]:
    """Line indexes where A and B part: their events differ, or what the
    event changed differs (in canonical form, for every kind of rules), or
    only one of them replayed it. Where the initial states differ, the
    first row is marked too (it starts from another state)."""
    found: list[int] = []
    lines = max(len(a.ledger), len(b.ledger))
    common = min(a.valid, b.valid)
    with change_log(a, common, cancelled) as log_a, change_log(b, common, cancelled) as log_b:
        if log_a is None or log_b is None:
            return found
        initial_differs = state_digest(a, 0) != state_digest(b, 0)
        for index in range(lines):
            if cancelled is not None and index % 4096 == 0 and cancelled():
                break
            seq = index + 1
            in_a, in_b = index < len(a.ledger), index < len(b.ledger)
            if in_a != in_b or event_digest_at(a, index, strict) != event_digest_at(
                b, index, strict
            ):
                found.append(index)
                continue
            valid_a, valid_b = seq <= a.valid, seq <= b.valid
            if (
                valid_a != valid_b
                or (seq == 1 and initial_differs)
                or (valid_a and not same_changes(log_a.raw(seq), log_b.raw(seq)))
            ):
                found.append(index)
    return found


@dataclass
class CompareAt:
    """B beside A at one seq: B's event if it differs, B's state word (or why
    it has none), and the state's changes from A to B at that prefix."""

    seq: int
    events_differ: bool
    b_event: Any  # the event's fields, None when B has no such line or skips it
    b_left_out: bool
    b_word: str | None
    b_stopped: str | None  # B's first error, when B has no state here
    changes: list[Any]
    cut: int = 0  # changes not shown (more than ``limit``)


def compare_at(a: Any, b: Any, seq: int, *, strict: bool = False, limit: int = 60) -> CompareAt:
    """What the state pane shows of B at ``seq`` (0: the initial states)."""
    index = seq - 1
    differ = False
    b_event = None
    if seq >= 1:
        in_b = index < len(b.ledger)
        differ = (
            not in_b
            or index >= len(a.ledger)
            or event_digest_at(a, index, strict) != event_digest_at(b, index, strict)
        )
        if in_b and seq not in b.skip:
            parsed = b.event(index)
            b_event = shown_event(b, parsed) if isinstance(parsed, Event) else None
    if seq > b.valid:
        err = b.error.one_line() if b.error is not None else "not read that far yet"
        return CompareAt(seq, differ, b_event, seq in b.skip, None, err, [])
    b_word = b.summarize(b.frozen_at(seq))
    changes: list[Any] = []
    if seq <= a.valid:
        changes = diff(thaw(a.frozen_at(seq)), thaw(b.frozen_at(seq)))
    cut = max(0, len(changes) - limit)
    return CompareAt(seq, differ, b_event, seq in b.skip, b_word, None, changes[:limit], cut)
