"""Envelope v1: turning one ledger line into an :class:`Event` (spec section 2).

:func:`parse_line` checks what a line can say about itself (encoding, JSON,
field types, version); :class:`SequenceChecker` checks what needs the lines
before it (seq order, run id, causal parent, known kinds, call ids).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from datetime import date
from typing import Any

import orjson

from replay_tui.core.strict_json import JSONDoubt, checked, trusted
from replay_tui.core.strict_json import loads as strict_loads
from replay_tui.formats.receipts import CALL_ID_PATTERN, call_id_problem

KNOWN_VERSIONS = frozenset({1})
_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))\Z",
    re.ASCII,  # \d is 0-9 only: "٠٩" is not an hour
)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
#: Seconds since the epoch of each calendar day seen (-1: not a real date).
#: A run spans few days, so this stays tiny; cleared if it ever grows.
_DAY_SECONDS: dict[str, int] = {}
#: The common form, UTC to the millisecond or finer (``2026-11-01T09:00:00.197Z``):
#: its minute's start cached, its seconds read by slicing.
_MINUTE_SECONDS: dict[str, int] = {}
_UTC_TAIL = re.compile(r"[0-5]\d(?:\.\d+)?Z", re.ASCII)
_MISSING: Any = object()
_CHAR_AT = re.compile(r"\(char (\d+)\)").search
_NOT_A_NUMBER = re.compile(rb"(?<=[:,\[\s])-?(?:NaN|Infinity)\b").search
_VALID_CALL_ID = CALL_ID_PATTERN.match
_CORE_FIELDS = frozenset({"seq", "run_id", "kind", "payload", "ts", "parent_seq", "v"})


class Event:
    """One valid-looking ledger line. ``fields`` is the whole JSON object,
    so fields this version does not know are shown, never dropped."""

    __slots__ = (
        "_ts_s",
        "fields",
        "kind",
        "line",
        "offset",
        "parent_seq",
        "payload",
        "run_id",
        "seq",
        "ts",
        "v",
    )

    def __init__(
        self,
        fields: dict[str, Any],
        seq: int,
        run_id: str,
        kind: str,
        payload: dict[str, Any],
        ts: str | None,
        parent_seq: Any,
        v: int,
        line: int,
        offset: int,
        ts_s: Any = _MISSING,
    ) -> None:
        self.fields = fields
        self.seq = seq
        self.run_id = run_id
        self.kind = kind
        self.payload = payload
        self.ts = ts
        self.parent_seq = parent_seq
        self.v = v
        self.line = line
        self.offset = offset
        self._ts_s = ts_s

    @property
    def ts_s(self) -> float | None:
        """``ts`` as seconds since the epoch (None without ts); read from
        ``ts`` when first asked unless the parse gave it."""
        ts_s = self._ts_s
        if ts_s is _MISSING:
            ts_s = self._ts_s = None if self.ts is None else ts_seconds(self.ts)
        return ts_s  # type: ignore[no-any-return]

    @ts_s.setter
    def ts_s(self, value: float | None) -> None:
        self._ts_s = value

    @property
    def call_id(self) -> str | None:
        cid = self.payload.get("call_id")
        return cid if isinstance(cid, str) else None

    def extra_fields(self) -> dict[str, Any]:
        """Top-level fields beyond envelope v1's, in file order."""
        return {k: v for k, v in self.fields.items() if k not in _CORE_FIELDS}

    def __repr__(self) -> str:
        return f"Event(seq={self.seq}, kind={self.kind!r}, line={self.line})"

    def noted_from(self, other: Event) -> None:
        """Take what the checks noted on ``other`` (this line's twin): its
        parent's seq."""
        self.parent_seq = other.parent_seq

    def detached(self) -> Event:
        """A copy whose objects and arrays are its own, its strings shared: what
        rules that might change their event get of a line kept parsed (a 12 MB
        result copied in microseconds, not parsed again)."""
        twin = copy.copy(self)
        twin.fields = _own_containers(self.fields)
        if self.payload is self.fields:  # a session's record is its own payload
            twin.payload = twin.fields
        elif self.payload is self.fields.get("payload"):
            twin.payload = twin.fields["payload"]
        else:
            twin.payload = _own_containers(self.payload)
        return twin


def event_of(obj: dict[str, Any], line: int, offset: int) -> Event:
    """The event of a line's object, already judged valid (line ``line``,
    1-based, at byte ``offset``): read again, as it was."""
    return Event(
        obj,
        obj["seq"],
        obj["run_id"],
        obj["kind"],
        obj.get("payload", {}),
        obj.get("ts"),
        obj.get("parent_seq"),
        obj.get("v", 1),
        line,
        offset,
    )


def _own_containers(value: Any) -> Any:
    if type(value) is dict:
        return {k: _own_containers(v) for k, v in value.items()}
    if type(value) is list:
        return [_own_containers(v) for v in value]
    return value


class LineError:
    """A line that is not a usable event, with what could be read of it."""

    __slots__ = ("code", "kind", "line", "message", "offset", "seq")

    def __init__(
        self,
        code: str,
        message: str,
        line: int,
        offset: int,
        seq: int | None = None,
        kind: str | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.line = line
        self.offset = offset
        self.seq = seq
        self.kind = kind

    def __repr__(self) -> str:
        return f"LineError({self.code!r}, line={self.line}, seq={self.seq})"


#: Deepest nesting accepted in a line. orjson writes at most 254 levels; rules
#: put payloads a few levels down in their state, so lines stop well short.
MAX_DEPTH = 200


def _deeper_than(value: Any, limit: int) -> bool:
    """True if ``value`` nests more than ``limit`` containers (iterative walk)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return False


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def is_json_int(value: Any) -> bool:
    """A JSON integer: Python int but not bool (``True`` is not seq 1)."""
    return type(value) is int


def _json_failure(raw: bytes, line: int, offset: int, exc: Exception) -> LineError:
    """Say whether a line failed as bytes (encoding) or as JSON."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        bad = raw[err.start : err.start + 1].hex()
        return LineError(
            "bad_encoding",
            f"not valid UTF-8: byte 0x{bad} at column {err.start + 1}",
            line,
            offset,
        )
    if b"\x00" in raw:
        col = raw.index(b"\x00") + 1
        return LineError("bad_json", f"NUL byte at column {col}", line, offset)
    msg = str(exc)
    special = _NOT_A_NUMBER(raw)
    at = _CHAR_AT(msg)
    if (
        special is not None
        and at is not None
        and special.start() <= int(at.group(1)) <= special.end()
    ):
        word = special.group(0).decode()
        return LineError(
            "bad_json",
            f"not valid JSON: {word} at column {special.start() + 1} is not a JSON number "
            "(JSON has no NaN or Infinity)",
            line,
            offset,
        )
    if "depth" in msg:
        msg = f"nested more than {MAX_DEPTH} levels deep (this reader's limit)"
    return LineError("bad_json", f"not valid JSON: {msg}", line, offset)


def parse_line(raw: bytes, line: int, offset: int) -> Event | LineError:
    """Parse one line (without its newline) into an Event, or say why not."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        got = _past_orjson(raw, line, offset)
        if isinstance(got, LineError):
            return got
        return _judge(got, raw, line, offset, exact=True)
    # Fast path for a line that is fine (nearly all of them): the same checks
    # as below, with no messages built. Anything off falls through to _judge.
    if type(obj) is dict:
        seq = obj.get("seq")
        run_id = obj.get("run_id")
        kind = obj.get("kind")
        payload = obj.get("payload", _MISSING)
        v = obj.get("v", 1)
        ts = obj.get("ts", _MISSING)
        if (
            type(seq) is int
            and type(run_id) is str
            and run_id
            and type(kind) is str
            and type(v) is int
            and v in KNOWN_VERSIONS
            and (payload is _MISSING or type(payload) is dict)
            and (ts is _MISSING or type(ts) is str)
            and (
                len(raw) <= MAX_DEPTH
                or raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH
                or not _deeper_than(obj, MAX_DEPTH)
            )
            and trusted(raw, obj)
        ):
            ts_s = None if ts is _MISSING else ts_seconds(ts)
            if ts_s is not None or ts is _MISSING:
                return Event(
                    obj,
                    seq,
                    run_id,
                    kind,
                    {} if payload is _MISSING else payload,
                    None if ts is _MISSING else ts,
                    obj.get("parent_seq"),
                    v,
                    line,
                    offset,
                    ts_s,
                )
    return _judge(obj, raw, line, offset)


def parse_object(raw: bytes, line: int, offset: int) -> dict[str, Any] | LineError:
    """One line as one JSON object read carefully, or why it is not one: the
    checks :func:`parse_line` makes before it looks at the envelope's fields
    (encoding, JSON, an object, depth, repeated keys, integers past 64 bits),
    with the same codes and messages. For the sources whose lines are records
    of another tool (:mod:`replay_tui.formats.sessions`)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        got = _past_orjson(raw, line, offset)
        if isinstance(got, LineError):
            return got
        obj, exact = got, True
    else:
        exact = False
    if type(obj) is not dict:
        return LineError(
            "bad_envelope", f"line is a JSON {_type_name(obj)}, not an object", line, offset
        )
    if (
        len(raw) > MAX_DEPTH
        and raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
        and _deeper_than(obj, MAX_DEPTH)
    ):
        return LineError(
            "bad_json",
            f"nested more than {MAX_DEPTH} levels deep (this reader's limit, so that every "
            "state stays writable as JSON)",
            line,
            offset,
        )
    if not exact:
        try:
            obj = checked(raw, obj)
        except JSONDoubt as why:
            return LineError("bad_json", str(why), line, offset)
    return obj  # type: ignore[no-any-return]


def _past_orjson(raw: bytes, line: int, offset: int) -> Any:
    """A line orjson refused: its exact reading where the only fault was an
    integer past a double's range, else the line's error."""
    if not raw.strip():
        return LineError("blank_line", "blank line in the ledger", line, offset)
    try:
        return strict_loads(raw)
    except JSONDoubt as why:
        return LineError("bad_json", str(why), line, offset)
    except orjson.JSONDecodeError as again:
        return _json_failure(raw, line, offset, again)


def _judge(
    obj: Any, raw: bytes, line: int, offset: int, *, exact: bool = False
) -> Event | LineError:
    """The full checks of a parsed line, each failure with its message."""
    if type(obj) is not dict:
        return LineError(
            "bad_envelope", f"line is a JSON {_type_name(obj)}, not an object", line, offset
        )
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _deeper_than(obj, MAX_DEPTH):
        return LineError(
            "bad_json",
            f"nested more than {MAX_DEPTH} levels deep (this reader's limit, so that every "
            "state stays writable as JSON)",
            line,
            offset,
        )
    if not exact:
        try:
            obj = checked(raw, obj)  # integers past 64 bits exactly; no repeated key
        except JSONDoubt as why:
            return LineError("bad_json", str(why), line, offset)
    seq = obj.get("seq")
    useful_seq = seq if is_json_int(seq) else None
    kind = obj.get("kind")
    useful_kind = kind if isinstance(kind, str) else None

    def bad(code: str, message: str) -> LineError:
        return LineError(code, message, line, offset, useful_seq, useful_kind)

    v = obj.get("v", 1)
    if not is_json_int(v):
        return bad("bad_envelope", f"v must be an integer, got {_type_name(v)}")
    if v not in KNOWN_VERSIONS:
        return bad("unsupported_version", f"envelope version {v} is not known to this reader")
    if seq is None:
        return bad("bad_envelope", "missing field seq")
    if useful_seq is None:
        return bad("bad_envelope", f"seq must be a JSON integer, got {_type_name(seq)}")
    run_id = obj.get("run_id")
    if run_id is None:
        return bad("bad_envelope", "missing field run_id")
    if not isinstance(run_id, str) or not run_id:
        return bad("bad_envelope", "run_id must be a non-empty string")
    if kind is None:
        return bad("bad_envelope", "missing field kind")
    if useful_kind is None:
        return bad("bad_envelope", f"kind must be a string, got {_type_name(kind)}")
    payload = obj.get("payload", {})
    if type(payload) is not dict:
        return bad("bad_envelope", f"payload must be an object, got {_type_name(payload)}")
    ts = obj.get("ts")
    ts_s = None
    if ts is not None or "ts" in obj:
        if not isinstance(ts, str):
            return bad("bad_envelope", f"ts must be an RFC 3339 string, got {_type_name(ts)}")
        ts_s = ts_seconds(ts)
        if ts_s is None:
            return bad("bad_envelope", f"ts {ts!r} is not an RFC 3339 time")
    return Event(obj, seq, run_id, kind, payload, ts, obj.get("parent_seq"), v, line, offset, ts_s)


def day_seconds(day: str) -> int:
    """Seconds since the epoch at the start of ``day`` (``YYYY-MM-DD``), or
    -1 if it is no real date (cached: a run spans few days)."""
    start = _DAY_SECONDS.get(day)
    if start is None:
        try:
            start = (date.fromisoformat(day).toordinal() - _EPOCH_DAY) * 86400
        except ValueError:
            start = -1
        if len(_DAY_SECONDS) > 4096:
            _DAY_SECONDS.clear()
        _DAY_SECONDS[day] = start
    return start


def ts_seconds(ts: str) -> float | None:
    """Seconds since the epoch for an RFC 3339 string (None if it is not one).

    A leap second (``23:59:60``) is valid RFC 3339 and counts as the second
    before. Computed from the parts (each day's start cached) rather than
    through ``datetime``: this runs once per event of million-event ledgers.
    """
    start_of_minute = _MINUTE_SECONDS.get(ts[:17])
    if start_of_minute is not None and _UTC_TAIL.fullmatch(ts, 17):
        whole = start_of_minute + int(ts[17:19])  # as below, to the last bit
        return whole + float(ts[19:-1]) if len(ts) > 20 else float(whole)
    m = _RFC3339.match(ts)
    if m is None:
        return None
    day, hh, mm, ss, frac, sign, oh, om = m.groups()
    start = day_seconds(day)
    hour, minute, second = int(hh), int(mm), int(ss)
    if start == -1 or hour > 23 or minute > 59 or second > 60:
        return None
    if second == 60:
        second = 59
    whole = start + hour * 3600 + minute * 60 + second
    if sign is None and ts[16:17] == ":" and ts[-1] in "Zz" and second < 60:
        if len(_MINUTE_SECONDS) > 4096:
            _MINUTE_SECONDS.clear()
        _MINUTE_SECONDS[ts[:17]] = whole - second  # the next in this minute: sliced
    if sign is not None:
        off_h, off_m = int(oh), int(om)
        if off_h > 23 or off_m > 59:
            return None
        offset = off_h * 3600 + off_m * 60
        whole = whole - offset if sign == "+" else whole + offset
    return whole + float(frac) if frac else float(whole)


class SequenceChecker:
    """The envelope rules that depend on earlier lines (spec sections 2-3)."""

    def __init__(
        self, kinds: frozenset[str], may_ignore: Callable[[Event], bool] | None = None
    ) -> None:
        self.kinds = kinds
        #: The rules' word that an event of a kind they do not know may be
        #: skipped (a Temporal event flagged ``workerMayIgnore``).
        self.may_ignore = may_ignore
        self.last_seq = 0
        self.run_id: str | None = None
        self.last_ts: float | None = None
        #: What :meth:`check` found at the event just checked that is not a
        #: stop: (code, message) warnings, taken (and cleared) by the pass.
        self.findings: list[tuple[str, str]] = []

    def check(self, event: Event) -> LineError | None:
        """None if ``event`` may follow the events checked so far."""
        seq = event.seq
        # Fast path: the usual event, next in line, same run, no parent_seq.
        if (
            seq == self.last_seq + 1
            and event.run_id == self.run_id
            and event.kind in self.kinds
            and "parent_seq" not in event.fields
        ):
            cid = event.payload.get("call_id", _MISSING)
            if cid is _MISSING or (type(cid) is str and _VALID_CALL_ID(cid) and cid[0] != "."):
                self.last_seq = seq
                return None
        return self._check(event)

    def _check(self, event: Event) -> LineError | None:
        seq = event.seq

        def bad(code: str, message: str) -> LineError:
            return LineError(code, message, event.line, event.offset, seq, event.kind)

        expected = self.last_seq + 1
        if seq != expected:
            if self.last_seq == 0:
                return bad("seq_gap", f"the first seq must be 1, got {seq}")
            if seq <= self.last_seq:
                return bad("seq_duplicate", f"seq {seq} is not after seq {self.last_seq}")
            return bad("seq_gap", f"seq {seq} follows seq {self.last_seq}: expected {expected}")
        if self.run_id is None:
            self.run_id = event.run_id
        elif event.run_id != self.run_id:
            return bad("mixed_run_ids", f"run_id {event.run_id!r} differs from {self.run_id!r}")
        if event.kind not in self.kinds and not self.ignorable(event):
            return bad("unknown_kind", f"kind {event.kind!r} is not known to these rules")
        parent = event.parent_seq
        if parent is not None or "parent_seq" in event.fields:
            if not is_json_int(parent):
                return bad("bad_parent", f"parent_seq must be an integer, got {_type_name(parent)}")
            if not 1 <= parent < seq:
                return bad("bad_parent", f"parent_seq {parent} is not in 1..{seq - 1}")
        if "call_id" in event.payload:
            problem = call_id_problem(event.payload["call_id"])
            if problem:
                return bad("bad_call_id", problem)
        self.last_seq = seq
        return None

    def ignorable(self, event: Event) -> bool:
        """An event of an unknown kind the rules say may be skipped."""
        if self.may_ignore is None:
            return False
        try:
            return self.may_ignore(event) is True
        except Exception:  # a bug in the hook: the kind stays unknown
            return False

    def ts_went_back(self, event: Event) -> bool:
        """True if ``event.ts`` is earlier than the last ts seen (a warning)."""
        if event.ts is None:
            return False
        now = event.ts_s
        went_back = now is not None and self.last_ts is not None and now < self.last_ts
        if now is not None:
            self.last_ts = now
        return went_back
