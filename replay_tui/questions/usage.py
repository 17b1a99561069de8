"""Token usage of agent sessions, counted as the built-in rules count it,
with an audit of what was left out and why.

- Claude Code (:mod:`replay_tui.reducers.claude_code`): one API message is
  often written as several ``assistant`` lines (a block each, the same
  ``message.id``), whose ``usage`` grows or repeats; each message counts
  once, with the usage of its last line. A line without ``requestId`` (as
  Bedrock writes them) is grouped by ``message.id`` all the same. A line with
  usage and no ``message.id`` counts by itself.
- Codex (:mod:`replay_tui.reducers.codex`): the usage is the latest
  ``token_count`` event's ``info.total_token_usage``, as recorded. An event
  that repeats the one before (the same total) adds nothing; a sum of
  ``last_token_usage`` over every event would count it twice.

Each API message (Codex: each increase of the totals) is priced as the rules
price it (:mod:`replay_tui.reducers.pricing`: genai-prices' data, or the
user's ``--prices`` file), at its time: ``micros`` are US micro-dollars,
``unpriced`` the models with tokens and no known price.

The audit says, per file and per day and model, how many lines (events)
were left out and what a naive per-line (per-event) sum would have added.
Sub-agents' transcripts (``<session-id>/subagents/agent-*.jsonl``, Claude
Code 2.x; ``agent-*.jsonl`` beside the session, 1.x, told by its
``sessionId``) count with their session and are listed apart; an API
message met again in a later file (same ``message.id``: a session's
records copied into another) is counted in each file and said so.

Files are read line by line (orjson), never whole: what is kept is a few
numbers per API message of the file being read. The dollars are the list
prices of the API (what a plan or a discount changes, no file says).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.formats.claude_records import USAGE_FIELDS
from replay_tui.formats.envelope import ts_seconds
from replay_tui.formats.session_stores.subagents import SubagentIndex, subagent_files
from replay_tui.formats.sessions import (
    CLAUDE_CODE,
    CODEX,
    GEMINI,
    codex_item,
    codex_kind,
    run_id_of,
    session_format_of,
)
from replay_tui.questions.gemini_usage import GEMINI_FIELDS, GeminiReader, document_records
from replay_tui.reducers import pricing
from replay_tui.reducers.claude_code.rules import cache_tokens
from replay_tui.reducers.codex.rules import call_tokens

CLAUDE_FIELDS: tuple[str, ...] = USAGE_FIELDS
CODEX_FIELDS: tuple[str, ...] = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)
FIELDS: dict[str, tuple[str, ...]] = {
    CLAUDE_CODE: CLAUDE_FIELDS,
    CODEX: CODEX_FIELDS,
    GEMINI: GEMINI_FIELDS,
}
GROUPINGS = ("session", "day", "month", "model")
#: The day or model of a record that says none.
UNKNOWN = "unknown"


class NotASession(ValueError):
    """The file is neither a Claude Code transcript nor a Codex rollout."""


def _count(value: Any) -> int:
    """A token count as the rules take it (anything but a whole number >= 0 is 0)."""
    return value if type(value) is int and value >= 0 else 0


def _vector(usage: Any, fields: tuple[str, ...]) -> list[int]:
    if not isinstance(usage, dict):
        return [0] * len(fields)
    return [_count(usage.get(f)) for f in fields]


def _plus(into: list[int], other: Iterable[int], sign: int = 1) -> None:
    for i, n in enumerate(other):
        into[i] += sign * n


def day_of(ts: Any) -> str | None:
    """The UTC date (``YYYY-MM-DD``) of a record's timestamp, None without one."""
    if not isinstance(ts, str):
        return None
    if len(ts) >= 20 and ts[-1] in "Zz" and ts[10:11] in "Tt ":
        return ts[:10]  # the common case: UTC already
    seconds = ts_seconds(ts)
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).date().isoformat()


@dataclass(slots=True)
class Tally:
    """What was counted, and what was left out, in a part of a session (one
    day and model of one file) or in a sum of parts. Token lists are in the
    order of :data:`FIELDS` for the source."""

    width: int
    tokens: list[int] = field(default_factory=list)
    #: Claude Code: API messages counted; Codex: token_count events with a new total.
    counted: int = 0
    #: Lines (Claude Code) or token_count events (Codex) that carry usage.
    lines: int = 0
    #: Claude Code: lines of a message before its last one, left out, and the messages.
    streamed_lines: int = 0
    streamed_messages: int = 0
    #: Of those messages, the ones without a requestId (Bedrock writes none).
    no_request_id: int = 0
    #: What a sum over every line (every token_count's last_token_usage) would add.
    per_line_adds: list[int] = field(default_factory=list)
    #: Claude Code: what a count keeping each message's first line would miss.
    first_line_misses: list[int] = field(default_factory=list)
    #: Codex: token_count events repeating the one before, and without usage.
    repeated: int = 0
    no_usage: int = 0
    #: Codex: the sum of last_token_usage over the events counted.
    per_event_sum: list[int] = field(default_factory=list)
    #: Claude Code: sub-agents' messages written in the session's own file (1.0).
    sidechain_messages: int = 0
    sidechain_tokens: list[int] = field(default_factory=list)
    #: Tokens from sub-agents' own transcripts, and those transcripts.
    subagent_tokens: list[int] = field(default_factory=list)
    subagents: set[str] = field(default_factory=set)
    #: Messages met before in another file read (same message.id), and those files.
    elsewhere_messages: int = 0
    elsewhere_tokens: list[int] = field(default_factory=list)
    elsewhere_in: set[str] = field(default_factory=set)
    #: Lines that are not JSON objects (a file's, not a day's or a model's).
    unreadable: int = 0
    #: What the counted tokens cost, in micro-dollars, and the models with no price.
    micros: int = 0
    unpriced: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        for name in _VECTORS:
            if not getattr(self, name):
                setattr(self, name, [0] * self.width)

    def add(self, other: Tally) -> None:
        for name in _VECTORS:
            _plus(getattr(self, name), getattr(other, name))
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.subagents |= other.subagents
        self.elsewhere_in |= other.elsewhere_in
        self.unpriced |= other.unpriced

    def charge(self, model: str, tokens: pricing.Tokens, provider: str, at: float | None) -> None:
        """Price one call's tokens as the rules do."""
        if not tokens.any():
            return
        micros = pricing.price(None if model == UNKNOWN else model, provider, tokens, at)
        if micros is None:
            self.unpriced.add(model)
        else:
            self.micros += micros


_VECTORS = (
    "tokens", "per_line_adds", "first_line_misses", "per_event_sum", "sidechain_tokens",
    "subagent_tokens", "elsewhere_tokens",
)  # fmt: skip
_COUNTS = (
    "counted", "lines", "streamed_lines", "streamed_messages", "no_request_id", "repeated",
    "no_usage", "sidechain_messages", "elsewhere_messages", "unreadable", "micros",
)  # fmt: skip

#: A part of a file: (day, model).
Key = tuple[str, str]


@dataclass(slots=True)
class FileUsage:
    """One file's usage, by day and model."""

    path: Path
    source: str
    session_id: str | None = None
    parts: dict[Key, Tally] = field(default_factory=dict)
    #: Every record's day (UTC), usage or not.
    days: set[str] = field(default_factory=set)
    records: int = 0
    unreadable: int = 0

    def part(self, key: Key) -> Tally:
        got = self.parts.get(key)
        if got is None:
            got = self.parts[key] = Tally(len(FIELDS[self.source]))
        return got

    def total(self) -> Tally:
        tally = Tally(len(FIELDS[self.source]))
        for part in self.parts.values():
            tally.add(part)
        tally.unreadable = self.unreadable
        return tally

    @property
    def tokens(self) -> dict[str, int]:
        """The file's own counts, as the rules' final ``usage`` says them."""
        return dict(zip(FIELDS[self.source], self.total().tokens, strict=True))

    @property
    def models(self) -> list[str]:
        return sorted({model for _, model in self.parts})


class _Message:
    """An API message's lines so far (Claude Code)."""

    __slots__ = ("at", "first", "hour", "key", "last", "lines", "no_request", "side", "sum")

    def __init__(
        self, key: Key, usage: list[int], no_request: bool, side: bool, rec: dict[str, Any]
    ) -> None:
        self.at: float | None = None
        self.hour: Any = None
        self.priced_as(rec)
        self.key = key
        self.first = usage
        self.last = usage
        self.sum = list(usage)
        self.lines = 1
        self.no_request = no_request
        self.side = side

    def priced_as(self, rec: dict[str, Any]) -> None:
        """The line whose usage counts: its time and its hour-long cache writes."""
        ts = rec.get("timestamp")
        self.at = ts_seconds(ts) if isinstance(ts, str) else None
        usage = rec["message"]["usage"]
        self.hour = usage.get("cache_creation")


class _ClaudeCode:
    """Reads a Claude Code transcript's lines as the ``claude_code`` rules count usage."""

    def __init__(self, usage: FileUsage) -> None:
        self.usage = usage
        self.messages: dict[str, _Message] = {}
        #: A record with ``isSidechain: false`` was read: not a sub-agent's own transcript.
        self.main = False

    def line(self, rec: dict[str, Any], day: str | None) -> None:
        if self.usage.session_id is None and isinstance(rec.get("sessionId"), str):
            self.usage.session_id = rec["sessionId"]
        if rec.get("isSidechain") is False:
            self.main = True
        if rec.get("type") != "assistant":
            return
        msg = rec.get("message")
        usage = msg.get("usage") if isinstance(msg, dict) else None
        if not isinstance(msg, dict) or not isinstance(usage, dict):
            return
        vec = _vector(usage, CLAUDE_FIELDS)
        model = msg.get("model")
        key = (day or UNKNOWN, model if isinstance(model, str) and model else UNKNOWN)
        no_request = not isinstance(rec.get("requestId"), str)
        side = rec.get("isSidechain") is True
        mid = msg.get("id")
        if not isinstance(mid, str):  # a message of its own line (the rules key it by seq)
            self._count(None, _Message(key, vec, no_request, side, rec), None)
            return
        known = self.messages.get(mid)
        if known is None:
            self.messages[mid] = _Message(key, vec, no_request, side, rec)
            return
        known.priced_as(rec)
        known.key = key
        known.last = vec
        _plus(known.sum, vec)
        known.lines += 1
        known.no_request = known.no_request and no_request
        known.side = side

    def finish(self, seen: dict[str, str] | None) -> None:
        for mid, msg in self.messages.items():
            self._count(mid, msg, seen)
        self.messages = {}

    def _count(self, mid: str | None, msg: _Message, seen: dict[str, str] | None) -> None:
        part = self.usage.part(msg.key)
        part.counted += 1
        part.lines += msg.lines
        _plus(part.tokens, msg.last)
        last = (msg.last[0], msg.last[1], msg.last[2], msg.last[3])
        part.charge(msg.key[1], cache_tokens(last, msg.hour), "anthropic", msg.at)
        if msg.lines > 1:
            part.streamed_messages += 1
            part.streamed_lines += msg.lines - 1
            part.no_request_id += msg.no_request
            _plus(part.per_line_adds, msg.sum)
            _plus(part.per_line_adds, msg.last, -1)
            _plus(part.first_line_misses, msg.last)
            _plus(part.first_line_misses, msg.first, -1)
        if msg.side and self.main:  # a sub-agent's, in its session's file
            part.sidechain_messages += 1
            _plus(part.sidechain_tokens, msg.last)
        if mid is None or seen is None:
            return
        where = seen.setdefault(mid, str(self.usage.path))
        if where != str(self.usage.path):
            part.elsewhere_messages += 1
            _plus(part.elsewhere_tokens, msg.last)
            part.elsewhere_in.add(where)


class _Codex:
    """Reads a Codex rollout's lines as the ``codex`` rules take usage: each
    token_count's increase over the one before goes to its day and model."""

    def __init__(self, usage: FileUsage) -> None:
        self.usage = usage
        self.model = UNKNOWN
        self.provider = "openai"
        self.total = [0] * len(CODEX_FIELDS)
        self.recorded: dict[str, Any] | None = None

    def line(self, rec: dict[str, Any], day: str | None) -> None:
        kind, _ = codex_kind(rec)
        if kind not in ("token_count", "turn_context", "session_meta"):
            return
        item = codex_item(rec)
        if kind == "session_meta":
            if self.usage.session_id is None and isinstance(item.get("id"), str):
                self.usage.session_id = item["id"]
            if isinstance(item.get("model_provider"), str):
                self.provider = item["model_provider"]
            return
        if kind == "turn_context":
            model = item.get("model")
            if isinstance(model, str) and model:
                self.model = model
            return
        part = self.usage.part((day or UNKNOWN, self.model))
        info = item.get("info")
        if not isinstance(info, dict):
            info = {}
        total = info.get("total_token_usage")
        if not isinstance(total, dict):
            part.no_usage += 1  # info: null (rate limits only)
            return
        part.lines += 1
        last = _vector(info.get("last_token_usage"), CODEX_FIELDS)
        if total == self.recorded:
            part.repeated += 1
            _plus(part.per_line_adds, last)
            return
        vec = _vector(total, CODEX_FIELDS)
        last_usage = info.get("last_token_usage")
        spent = call_tokens(
            self.recorded or {}, total, last_usage if isinstance(last_usage, dict) else {}
        )
        ts = rec.get("timestamp")
        part.charge(
            self.model, spent, self.provider, ts_seconds(ts) if isinstance(ts, str) else None
        )
        part.counted += 1
        _plus(part.tokens, vec)
        _plus(part.tokens, self.total, -1)
        _plus(part.per_event_sum, last)
        self.total = vec
        self.recorded = total

    def finish(self, seen: dict[str, str] | None) -> None:
        return None


def read_file(
    path: Path,
    source: str | None = None,
    *,
    stop_line: int | None = None,
    seen: dict[str, str] | None = None,
) -> FileUsage:
    """The usage of one session file (its lines before ``stop_line``, if
    given). ``seen``: message id -> the file it was first met in, shared by
    the files read together (filled here). Raises :class:`NotASession` for
    a file that is neither source's, ``OSError`` if it cannot be read."""
    source = source or session_format_of(path)
    if source not in FIELDS:
        raise NotASession(f"{path}: not a Claude Code, Codex or Gemini CLI session")
    usage = FileUsage(path, source)
    reader: _ClaudeCode | _Codex | GeminiReader
    if source == GEMINI:
        reader = GeminiReader(usage)
        records = document_records(path)
        if records is not None:  # the older form: one document
            for rec in records:
                if type(rec) is dict:
                    day = day_of(rec.get("timestamp"))
                    if day is not None:
                        usage.days.add(day)
                    reader.line(rec, day)
            reader.finish(seen)
            usage.records = len(records)
            return usage
    else:
        reader = _ClaudeCode(usage) if source == CLAUDE_CODE else _Codex(usage)
    days = usage.days
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if stop_line is not None and number >= stop_line:
                break
            usage.records = number
            if not raw.strip():
                continue
            try:
                rec = strict_json.loads_written(raw)
            except orjson.JSONDecodeError:
                usage.unreadable += 1
                continue
            if type(rec) is not dict:
                usage.unreadable += 1
                continue
            day = day_of(rec.get("timestamp"))
            if day is not None:
                days.add(day)
            reader.line(rec, day)
    reader.finish(seen)
    return usage


# -- sessions and their sub-agents ------------------------------------------------


@dataclass(slots=True)
class SessionUsage:
    """One session: its file's usage and its sub-agents' (Claude Code)."""

    path: Path
    source: str
    #: What people call it in a table: its path under the folder it was found in.
    label: str
    file: FileUsage
    subagents: list[FileUsage] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.file.session_id or run_id_of(self.path)

    def files(self) -> list[FileUsage]:
        return [self.file, *self.subagents]

    def parts(self) -> Iterator[tuple[Key, Tally]]:
        """Each file's (day, model) parts, the sub-agents' marked as theirs."""
        for usage in self.files():
            for key, part in usage.parts.items():
                if usage is not self.file:
                    part = _as_subagents(part, usage.path)
                yield key, part

    def total(self) -> Tally:
        tally = Tally(len(FIELDS[self.source]))
        for _, part in self.parts():
            tally.add(part)
        tally.unreadable = sum(u.unreadable for u in self.files())
        return tally

    @property
    def tokens(self) -> dict[str, int]:
        """With the sub-agents' (:attr:`FileUsage.tokens`: the file's own)."""
        return dict(zip(FIELDS[self.source], self.total().tokens, strict=True))

    @property
    def models(self) -> list[str]:
        return sorted({model for (_, model), _ in self.parts()})

    @property
    def days(self) -> list[str]:
        return sorted(set().union(*(u.days for u in self.files())))


def _as_subagents(part: Tally, path: Path) -> Tally:
    copy = Tally(part.width)
    copy.add(part)
    _plus(copy.subagent_tokens, part.tokens)
    copy.subagents.add(str(path))
    return copy


def session_usage(
    path: Path,
    source: str | None = None,
    *,
    label: str | None = None,
    subagents: bool = True,
    stop_line: int | None = None,
    seen: dict[str, str] | None = None,
    index: SubagentIndex | None = None,
) -> SessionUsage:
    """The usage of the session file ``path``, with its sub-agents'
    transcripts (Claude Code; ``subagents=False``: the file alone)."""
    own = read_file(path, source, stop_line=stop_line, seen=seen)
    session = SessionUsage(path, own.source, label or run_id_of(path), own)
    if subagents and own.source == CLAUDE_CODE:
        index = index if index is not None else SubagentIndex()
        for agent in subagent_files(path, own.session_id, index):
            session.subagents.append(read_file(agent, CLAUDE_CODE, seen=seen))
    return session


# -- groups ------------------------------------------------------------------------


@dataclass(slots=True)
class Group:
    """A row of the table: a session, a day or a model, of one source."""

    key: str
    source: str
    tally: Tally
    sessions: list[SessionUsage] = field(default_factory=list)
    days: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)


def group_sessions(sessions: Iterable[SessionUsage], by: str) -> dict[str, list[Group]]:
    """Per source (in :data:`FIELDS`' order), the groups: each session, each
    day or each model (sorted), with their tallies."""
    if by not in GROUPINGS:
        raise ValueError(f"by {by!r}: expected one of {', '.join(GROUPINGS)}")
    found: dict[str, dict[str, Group]] = {source: {} for source in FIELDS}
    rows: dict[str, list[Group]] = {source: [] for source in FIELDS}
    for session in sessions:
        if by == "session":
            group = Group(session.label, session.source, session.total(), [session])
            group.days.update(session.days)
            group.models.update(session.models)
            rows[session.source].append(group)
            continue
        groups = found[session.source]
        for (day, model), part in session.parts():
            name = model if by == "model" else day if by == "day" else day[:7]
            group = groups.get(name) or groups.setdefault(
                name, Group(name, session.source, Tally(len(FIELDS[session.source])))
            )
            group.tally.add(part)
            group.days.add(day)
            group.models.add(model)
            if not group.sessions or group.sessions[-1] is not session:
                group.sessions.append(session)
    for source, groups in found.items():
        rows[source].extend(sorted(groups.values(), key=lambda g: g.key))
    return {source: groups for source, groups in rows.items() if groups}


def total_of(sessions: Iterable[SessionUsage], source: str) -> Tally:
    """Every session of ``source`` added up (unreadable lines too)."""
    tally = Tally(len(FIELDS[source]))
    for session in sessions:
        if session.source == source:
            tally.add(session.total())
    return tally
