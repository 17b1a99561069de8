"""Envelope v1 over a chunk of lines at once: the usual case in a few calls.

:func:`parse_line` and :class:`SequenceChecker` judge one line in a dozen
Python steps; a million-event ledger makes that most of ``check``. Nearly
every chunk of a real ledger is regular: compact JSON objects, seqs one
after another, one run id, known kinds, no ``parent_seq``, one form of
``ts`` going forward. :func:`regular_events` proves exactly that of a whole
chunk with calls that each walk the chunk in C (``map``, ``set``, one
``orjson.dumps`` of the chunk, one regular expression over its ``ts`` and
its call ids) and gives the chunk's events; anything it cannot prove, it
refuses (None), and the caller judges those lines one at a time, with the
messages those checks give. So it never finds a line bad: it only finds
lines good faster, by the same rules (spec sections 2-3):

- each line one JSON object, trusted by :func:`~replay_tui.core.strict_json.trust_chunk`
  (no repeated key, no integer past 64 bits), nested at most ``MAX_DEPTH``;
- ``seq`` integers following the last seq by one, ``run_id`` the run's
  (a non-empty string), ``kind`` one the rules know, ``v`` 1 where given,
  ``payload`` an object, no ``parent_seq`` (the per-line checks judge it);
- ``ts`` on every line or none, all ``YYYY-MM-DDTHH:MM:SS[.f]Z`` of one
  length (so text order is time order) on real days; one going back stays
  on this path, a warning at its event (:attr:`Regular.backs`);
- call ids of the form the spec allows.

The native line core (:mod:`replay_tui.core.line_core`) proves the same
of the bytes themselves; :func:`proven_events` then makes the events of
the lines it proved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from operator import itemgetter, methodcaller
from typing import Any

import orjson

from replay_tui.core.strict_json import COMPACT, trust_chunk
from replay_tui.formats.envelope import MAX_DEPTH, Event, day_seconds, ts_seconds

_MISSING: Any = object()
_SEQ = itemgetter("seq")
_RUN_ID = itemgetter("run_id")
_KIND = itemgetter("kind")
_PAYLOAD = methodcaller("get", "payload", _MISSING)
_TS = methodcaller("get", "ts", _MISSING)
_CALL_ID = methodcaller("get", "call_id", _MISSING)
_CALL_ID_OR_NONE = methodcaller("get", "call_id")
_HAS_V = methodcaller("__contains__", "v")
_HAS_PARENT = methodcaller("__contains__", "parent_seq")
_GET_PAYLOAD = itemgetter("payload")
_GET_TS = itemgetter("ts")
_DAY = itemgetter(slice(0, 10))
_COUNT = bytes.count
#: ``ts`` lines, each followed by ``\n``: UTC, hours, minutes and seconds in
#: range (a leap second and offsets are left to the per-line reading).
_UTC_TIMES = re.compile(
    r"(?:\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
    r"(?:\.\d+)?Z\n)*",
    re.ASCII,
)
#: Call ids, each followed by ``\n``: CALL_ID_PATTERN, not starting with a dot.
_CALL_IDS = re.compile(r"(?:[A-Za-z0-9_:-][A-Za-z0-9._:-]{0,127}\n)*", re.ASCII)


class Regular:
    """A chunk's events, and what the checks of the next chunk start from."""

    __slots__ = ("backs", "call_ids", "compact", "events", "last_ts", "seconds", "times")

    def __init__(
        self,
        events: list[Event],
        call_ids: list[Any],
        times: list[str] | None,
        last_ts: float | None,
        compact: bool,
        backs: list[int],
        seconds: Sequence[float] | None = None,
    ) -> None:
        self.events = events
        #: Each event's ``payload["call_id"]`` (a valid call id), or None.
        self.call_ids = call_ids
        #: Each event's ``ts`` (None: no line of the chunk has one).
        self.times = times
        #: The last ``ts`` in seconds once the chunk is read (where the line
        #: checks go on from; without any ``ts``, the one before the chunk).
        self.last_ts = last_ts
        #: Every line is ``orjson.dumps`` of its event's fields, byte for byte.
        self.compact = compact
        #: Indexes of the events whose ``ts`` is earlier than the one before
        #: (the last before the chunk for the first): a ``ts_backwards`` each.
        self.backs = backs
        #: Each event's ``ts`` in seconds where the line core read them (else None).
        self.seconds = seconds

    def seconds_of(self) -> Sequence[float | None] | None:
        """Each event's ``ts`` in seconds, for the app's clock (None: they carry none)."""
        if self.seconds is not None:
            return self.seconds  # the native core read them
        return list(map(ts_seconds, self.times)) if self.times else None


def regular_events(
    lines: list[bytes],
    first_line: int,
    offsets: Iterable[int],
    *,
    last_seq: int,
    run_id: str | None,
    last_ts: float | None,
    kinds: frozenset[str],
) -> Regular | None:
    """The events of ``lines`` (line numbers from ``first_line``, byte
    offsets ``offsets``) if every one is regular (see the module) and may
    follow ``last_seq``, ``run_id`` and ``last_ts``; else None."""
    n = len(lines)
    if not n:
        return None
    try:
        objs = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        return None
    if set(map(type, objs)) != {dict}:
        return None
    trusted = trust_chunk(lines, objs)
    if trusted is None:
        return None
    if max(map(len, lines)) > MAX_DEPTH and (
        max(map(_COUNT, lines, repeat(b"{"))) + max(map(_COUNT, lines, repeat(b"["))) > MAX_DEPTH
    ):
        return None  # perhaps too deep: the per-line reading measures it
    try:
        seqs = list(map(_SEQ, objs))
        run_ids = list(map(_RUN_ID, objs))
        kind_of = list(map(_KIND, objs))
    except KeyError:
        return None
    if set(map(type, seqs)) != {int} or seqs != list(range(last_seq + 1, last_seq + 1 + n)):
        return None
    if set(map(type, run_ids)) != {str} or set(map(type, kind_of)) != {str}:
        return None
    runs = set(run_ids)
    if len(runs) != 1 or (run_id is not None and runs != {run_id}) or not run_ids[0]:
        return None
    if not kinds.issuperset(kind_of) or any(map(_HAS_PARENT, objs)):
        return None
    versions: Any = repeat(1)
    if any(map(_HAS_V, objs)):
        versions = [obj.get("v", 1) for obj in objs]
        if set(map(type, versions)) != {int} or set(versions) != {1}:
            return None
    payloads = list(map(_PAYLOAD, objs))
    if set(map(type, payloads)) != {dict}:
        return None  # a payload left out (or not an object): read line by line
    times: list[Any] | None = list(map(_TS, objs))
    assert times is not None
    backs: list[int] = []
    if times.count(_MISSING) == n:
        times = None
    elif not _regular_times(times):
        return None
    else:
        backs = _went_back(
            times.__getitem__, last_ts, [i for i in range(1, n) if times[i] < times[i - 1]]
        )
        last_ts = ts_seconds(times[-1])
    call_ids: list[Any] = list(map(_CALL_ID, payloads))
    if call_ids.count(_MISSING) == n:
        call_ids = [None] * n
    else:
        given = [cid for cid in call_ids if cid is not _MISSING]
        if set(map(type, given)) != {str} or not _CALL_IDS.fullmatch("\n".join(given) + "\n"):
            return None
        call_ids = list(map(_CALL_ID_OR_NONE, payloads))
    events = _events(objs, seqs, run_ids, kind_of, payloads, times, versions, first_line, offsets)
    return Regular(events, call_ids, times, last_ts, trusted == COMPACT, backs)


def _events(
    objs: list[dict[str, Any]],
    seqs: Iterable[int],
    run_ids: Iterable[str],
    kinds: Iterable[str],
    payloads: list[Any],
    times: list[Any] | None,
    versions: Iterable[int],
    first_line: int,
    offsets: Iterable[int],
    seconds: Sequence[float] | None = None,
) -> list[Event]:
    """The chunk's events, made in one ``map`` (no parent: a regular line
    has none; ``seconds``: each one's ``ts`` in seconds, known already)."""
    fields = (
        objs,
        seqs,
        run_ids,
        kinds,
        payloads,
        times if times is not None else repeat(None),
        repeat(None),
        versions,
        range(first_line, first_line + len(objs)),
        offsets,
    )
    if seconds is None:
        return list(map(Event, *fields))
    return list(map(Event, *fields, seconds))


def _regular_times(times: list[Any]) -> bool:
    """Every ``ts`` given, of one form and length, and real."""
    if set(map(type, times)) != {str} or len(set(map(len, times))) != 1:
        return False
    if not _UTC_TIMES.fullmatch("\n".join(times) + "\n"):
        return False
    return -1 not in map(day_seconds, set(map(_DAY, times)))


def _went_back(ts: Callable[[int], Any], last_ts: float | None, earlier: list[int]) -> list[int]:
    """The events whose time is earlier than the one before, as the line
    checks judge it (in seconds): of ``earlier`` (indexes whose text is
    before the text of the one before, so perhaps earlier: equal seconds
    are not), and the first against ``last_ts``; ``ts(i)``: the ``ts`` of
    event ``i``."""
    backs = [i for i in earlier if ts_seconds(ts(i)) < ts_seconds(ts(i - 1))]  # type: ignore[operator]
    if last_ts is not None and ts_seconds(ts(0)) < last_ts:  # type: ignore[operator]
        backs.insert(0, 0)
    return backs


def went_back_in(
    lines: list[bytes], earlier: list[int], last_ts: float | None
) -> list[tuple[int, str]]:
    """:func:`_went_back` for lines proven regular with a ``ts`` each,
    reading only the lines it compares: each event's index and ``ts``."""
    times: dict[int, Any] = {}

    def ts(at: int) -> Any:
        if at not in times:
            times[at] = orjson.loads(lines[at])["ts"]
        return times[at]

    return [(at, times[at]) for at in _went_back(ts, last_ts, earlier)]


def proven_events(
    lines: list[bytes],
    first_line: int,
    offsets: Iterable[int],
    *,
    first_seq: int,
    run_id: str | None,
    timed: bool,
    earlier: list[int],
    last_ts: float | None,
    compact_needed: bool,
    seconds: Sequence[float] | None = None,
) -> Regular | None:
    """The events of ``lines``, which the native line core proved regular
    (seqs from ``first_seq``; each with a ``ts`` if ``timed``; ``earlier``:
    the indexes whose ``ts`` text is before the one before's; ``seconds``:
    each ``ts`` in seconds, where the core read them); None if orjson
    reads them otherwise (then they are judged a line at a time)."""
    n = len(lines)
    try:
        objs = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        return None
    payloads = list(map(_GET_PAYLOAD, objs))
    times = list(map(_GET_TS, objs)) if timed else None
    backs: list[int] = []
    if times is None:
        seconds = None  # none to read
    else:
        backs = _went_back(times.__getitem__, last_ts, earlier)
        last_ts = seconds[-1] if seconds is not None else ts_seconds(times[-1])
    events = _events(
        objs,
        range(first_seq, first_seq + n),
        repeat(run_id if run_id is not None else objs[0]["run_id"]),
        map(_KIND, objs),
        payloads,
        times,
        repeat(1),
        first_line,
        offsets,
        seconds,
    )
    compact = compact_needed and trust_chunk(lines, objs) == COMPACT
    call_ids = list(map(_CALL_ID_OR_NONE, payloads))
    return Regular(events, call_ids, times, last_ts, compact, backs, seconds)
