"""Agent sessions as ledgers: Claude Code transcripts and Codex rollouts.

Claude Code (``~/.claude/projects/<project>/<session-id>.jsonl``) and Codex
(``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) write one JSON record a
line, append-only, while the agent works. Like a Temporal history, the file
itself is the ledger; unlike one, it is huge (100 MB to many GB) and grows
while it is read, so it is never converted: it is indexed in place by
:class:`~replay_tui.formats.ledger.Ledger` (offsets, ``pread``, a bounded LRU)
and each line is mapped, as it is parsed, to the event the engine wants:

- ``seq`` is the line number, ``run_id`` the file name without ``.jsonl``
  (Claude Code names its file after the session id, Codex ends the name with
  it), ``ts`` the record's ``timestamp``, ``payload`` and ``fields`` the record
  itself, as it is (the very object parsed: nothing is copied);
- ``kind`` a name derived from the record (see :func:`claude_code_kind` and
  :func:`codex_kind`), ``call_id`` the tool call the record requests or answers.

The per-line cost over ``events.jsonl``'s: the same careful JSON checks
(:func:`~replay_tui.formats.envelope.parse_object`), a few dict lookups to
name the kind, and for Claude Code two probes of a table of the uuids seen.

What the format promises and is checked
(:mod:`replay_tui.formats.session_checks`, before the rules run, for every
record whatever its type): a ``uuid`` is not used twice (``seq_duplicate``),
and a ``parentUuid`` is a string or null (``bad_parent``). One that names no
earlier record is a finding, not a stop (``broken_chain``: Claude Code writes
such records itself and goes on), with what it costs a later ``--resume``
(:mod:`replay_tui.formats.chain`); a ``compact_boundary`` starts a new chain,
and a sub-agent's transcript (every record so far ``isSidechain: true``) may
name parents that live in the main session. The rest (calls and their
results) is the rules' (:mod:`replay_tui.reducers.claude_code`, ``codex``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.formats.chain import (
    NOT_RECORD,
    ChainIndex,
    Resume,
)
from replay_tui.formats.claude_records import Usage
from replay_tui.formats.envelope import (
    Event,
    LineError,
    SequenceChecker,
    parse_object,
    ts_seconds,
)
from replay_tui.formats.gemini.records import gemini_format_of_head, looks_like_gemini_json
from replay_tui.formats.persisted import read_persisted
from replay_tui.formats.session_checks import (
    ClaudeCodeChecker,
    SessionChecker,
)

CLAUDE_CODE = "claude-code"
CODEX = "codex"
#: Gemini CLI's sessions: their lines are read by :mod:`replay_tui.formats.gemini`.
GEMINI = "gemini"
SESSION_FORMATS = (CLAUDE_CODE, CODEX, GEMINI)
#: The built-in rules each source opens with.
REDUCERS = {CLAUDE_CODE: "claude_code", CODEX: "codex", GEMINI: "gemini"}

#: Bytes (and lines) looked at to tell what a file is.
HEAD_BYTES = 1 << 20
_HEAD_LINES = 64


class RecordEvent(Event):
    """An event that is a record of another tool, as it is: ``fields`` and
    ``payload`` are the record; ``call_id`` is the call it requests or answers
    (found by the mapping, not a field of the record)."""

    __slots__ = ("_call", "chain", "chain_why", "earlier_usage", "mended")

    _call: str | None
    #: Claude Code: the walk ``claude --resume`` does back from this record
    #: (None: not a chain record, or not a Claude Code transcript), what
    #: the record is in the chain (:mod:`replay_tui.formats.chain`), and the
    #: earlier records whose parent this record is, written after them.
    chain: Resume | None
    chain_why: int
    mended: tuple[int, ...]
    #: Claude Code: a line of an API message that resumes after lines of
    #: other messages: the message's usage at its line before (None: the
    #: message is new, or continues the line before it).
    earlier_usage: Usage | None

    @property
    def call_id(self) -> str | None:
        return self._call

    def noted_from(self, other: Event) -> None:
        """Its parent's seq, and its place in the chain."""
        super().noted_from(other)
        self.chain = getattr(other, "chain", None)
        self.chain_why = getattr(other, "chain_why", NOT_RECORD)
        self.mended = getattr(other, "mended", ())
        self.earlier_usage = getattr(other, "earlier_usage", None)


def _text(value: Any) -> str | None:
    return value if type(value) is str else None


# -- naming a record's kind ---------------------------------------------------


def claude_code_kind(rec: dict[str, Any]) -> tuple[str, str | None]:
    """(kind, call_id) of a Claude Code record.

    - ``user``: ``tool_result`` when it carries a tool result (call_id: the
      first block's ``tool_use_id``), else ``user`` (a prompt, a command, a
      meta or compaction message);
    - ``assistant``: ``tool_use`` when it requests a tool (call_id: the block's
      ``id``), ``assistant`` for text, ``thinking`` for thinking only;
    - ``system``: ``compact_boundary`` for that subtype, else ``system``;
    - any other ``type`` as it is (``summary``, ``progress``,
      ``file-history-snapshot``, ``queue-operation``, and whatever comes
      next; call_id: its ``toolUseID`` if any); ``unknown`` without one.
    """
    t = rec.get("type")
    if t == "assistant" or t == "user":
        msg = rec.get("message")
        content = msg.get("content") if type(msg) is dict else None
        if type(content) is list:
            want = "tool_result" if t == "user" else "tool_use"
            key = "tool_use_id" if t == "user" else "id"
            seen = None
            for block in content:
                if type(block) is dict:
                    bt = block.get("type")
                    if bt == want:
                        return want, _text(block.get(key))
                    if seen is None or bt == "text":
                        seen = bt
            if t == "assistant" and seen in ("thinking", "redacted_thinking"):
                return "thinking", None
        return t, None
    if t == "system":
        kind = "compact_boundary" if rec.get("subtype") == "compact_boundary" else "system"
        return kind, _text(rec.get("toolUseID"))
    if type(t) is str and t:
        return t, _text(rec.get("parentToolUseID")) or _text(rec.get("toolUseID"))
    return "unknown", None


_CODEX_WRAPPERS = frozenset({"response_item", "event_msg"})
_CODEX_ROLES = frozenset({"user", "assistant", "developer", "system"})
_CODEX_TOP = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


def codex_item(rec: dict[str, Any]) -> dict[str, Any]:
    """The item a Codex record holds: its ``payload`` for ``response_item``
    and ``event_msg`` (and the other wrapped records), the record itself in
    the first rollouts, which wrote response items bare."""
    payload = rec.get("payload")
    if type(payload) is dict and rec.get("type") in _CODEX_TOP:
        return payload
    return rec


def codex_kind(rec: dict[str, Any]) -> tuple[str, str | None]:
    """(kind, call_id) of a Codex rollout record.

    - ``response_item`` and ``event_msg``: the item's ``type``
      (``function_call``, ``function_call_output``, ``custom_tool_call``,
      ``reasoning``, ``token_count``, ``exec_command_end``, ...), a ``message``
      named by its role (``user``, ``assistant``, ``developer``, ``system``);
    - ``session_meta``, ``turn_context``, ``compacted`` as they are;
    - the first rollouts' bare items likewise, their header ``{id, timestamp,
      instructions}`` as ``session_meta`` and ``{record_type}`` as ``state``;
    - call_id: the item's ``call_id``.
    """
    t = rec.get("type")
    payload = rec.get("payload")
    if type(payload) is dict and t in _CODEX_TOP:
        if t not in _CODEX_WRAPPERS:
            return t, None
        item = payload
    elif type(t) is str and t:
        item = rec  # a bare item (the first rollouts)
    elif "record_type" in rec:
        return "state", None
    elif "id" in rec and "timestamp" in rec:
        return "session_meta", None
    else:
        return "unknown", None
    it = item.get("type")
    if it == "message":
        role = item.get("role")
        return (role if role in _CODEX_ROLES else "message"), None
    if type(it) is not str or not it:
        return (t if type(t) is str else "unknown"), None
    return it, _text(item.get("call_id"))


# -- the mapping of a line ------------------------------------------------------


def _text_of_block(block: dict[str, Any]) -> str:
    """The text of a ``tool_result`` block (a string, or its text parts)."""
    content = block.get("content")
    if type(content) is str:
        return content
    if type(content) is list:
        for part in content:
            if type(part) is dict and type(part.get("text")) is str:
                return str(part["text"])
    return ""


def run_id_of(path: Path) -> str:
    """The run_id of a session file: its name without ``.jsonl``."""
    name = path.name
    return name[: -len(".jsonl")] if name.lower().endswith(".jsonl") else name


class SessionLines:
    """How the lines of one session file become events (one per file: it
    knows the file's run_id). ``parse`` is what :class:`Ledger` calls."""

    format = ""
    #: Top-level fields left out when two sessions' events are compared
    #: (``diff`` without ``--strict-events``): ids and times of the session
    #: and its records, as run_id and ts are for a ledger.
    volatile: frozenset[str] = frozenset({"timestamp"})

    def __init__(self, path: Path) -> None:
        self.run_id = run_id_of(path)
        self.path = path

    def kind_of(self, rec: dict[str, Any]) -> tuple[str, str | None]:
        raise NotImplementedError

    def parse(self, raw: bytes, line: int, offset: int) -> Event | LineError:
        """Line ``line`` as an event, or why it is not one (bad JSON or
        encoding, not an object: as for any ledger)."""
        rec = parse_object(raw, line, offset)
        if type(rec) is not dict:
            return rec  # type: ignore[return-value]
        return self.event(rec, line, offset)

    def reread(self, raw: bytes, line: int, offset: int) -> Event:
        """A line that was validated, again (for the rules): no checks."""
        return self.event(strict_json.loads_written(raw), line, offset)

    def event(self, rec: dict[str, Any], line: int, offset: int) -> RecordEvent:
        kind, call = self.kind_of(rec)
        ts = rec.get("timestamp")
        if type(ts) is str:
            ts_s = ts_seconds(ts)
        else:
            ts, ts_s = None, None
        event = RecordEvent(rec, line, self.run_id, kind, rec, ts, None, 1, line, offset, ts_s)
        event._call = call
        event.chain = None
        event.chain_why = NOT_RECORD
        event.mended = ()
        event.earlier_usage = None
        return event

    def checker(
        self,
        kinds: frozenset[str],
        may_ignore: Callable[[Event], bool] | None,
        read_line: Callable[[int], bytes],
    ) -> SequenceChecker:
        return SessionChecker(kinds, may_ignore)

    def result_data(self, rec: dict[str, Any], call_id: str) -> Any:
        """The recorded result of ``call_id`` in its result record."""
        raise NotImplementedError

    def compare_key(self, rec: dict[str, Any]) -> list[Any]:
        """What ``diff`` compares of a record: its kind and the record
        without :attr:`volatile` fields."""
        kind, _ = self.kind_of(rec)
        return [kind, {k: v for k, v in rec.items() if k not in self.volatile}]


class ClaudeCodeLines(SessionLines):
    format = CLAUDE_CODE
    volatile = frozenset(
        {"uuid", "parentUuid", "logicalParentUuid", "leafUuid", "timestamp", "sessionId"}
        | {"requestId", "messageId"}
    )

    def kind_of(self, rec: dict[str, Any]) -> tuple[str, str | None]:
        return claude_code_kind(rec)

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        #: Where each line's parentUuid chain goes, filled by the checker.
        self.chain = ChainIndex()
        #: Lines of a message resuming after others -> its usage before.
        self.earlier: dict[int, Usage] = {}

    def checker(
        self,
        kinds: frozenset[str],
        may_ignore: Callable[[Event], bool] | None,
        read_line: Callable[[int], bytes],
    ) -> SequenceChecker:
        self.chain = ChainIndex()  # a new pass: new indexes
        self.earlier = {}
        return ClaudeCodeChecker(kinds, may_ignore, read_line, self.chain, self.earlier)

    def reread(self, raw: bytes, line: int, offset: int) -> Event:
        """A line that was validated, again (for the rules), with its place
        in the chain as the checker found it."""
        event = self.event(strict_json.loads_written(raw), line, offset)
        chain = self.chain
        if line <= len(chain):
            event.chain_why = chain.why[line]
            event.chain = chain.resume(line)
            parent = chain.parent[line]
            if parent:
                event.parent_seq = parent
            mended = chain.mended.copy()  # the forward pass may add to it meanwhile
            event.mended = tuple(c for c, p in mended.items() if p == line)
        event.earlier_usage = self.earlier.get(line)
        return event

    def result_data(self, rec: dict[str, Any], call_id: str) -> Any:
        """``{"tool_result": <the block>, "toolUseResult": <its structured
        result>}`` (the latter when the record has one); the blocks' list
        when a record answers the call in several."""
        msg = rec.get("message")
        content = msg.get("content") if type(msg) is dict else None
        blocks = [
            b
            for b in (content if type(content) is list else ())
            if type(b) is dict
            and b.get("type") == "tool_result"
            and b.get("tool_use_id") == call_id
        ]
        data: dict[str, Any] = {"persisted_output": None}
        data["tool_result"] = blocks[0] if len(blocks) == 1 else blocks
        if "toolUseResult" in rec:
            data["toolUseResult"] = rec["toolUseResult"]
        saved = None
        for block in blocks:
            text = _text_of_block(block)
            saved = read_persisted(self.path, text) if text else None
            if saved is not None:
                break
        if saved is None:
            del data["persisted_output"]
        else:  # first: it is what the result was, the preview only stood for it
            data["persisted_output"] = saved
        return data

    def compare_key(self, rec: dict[str, Any]) -> list[Any]:
        kind, body = super().compare_key(rec)
        msg = body.get("message")
        if type(msg) is dict and "id" in msg:
            body["message"] = {k: v for k, v in msg.items() if k != "id"}
        return [kind, body]


class CodexLines(SessionLines):
    format = CODEX

    def kind_of(self, rec: dict[str, Any]) -> tuple[str, str | None]:
        return codex_kind(rec)

    def result_data(self, rec: dict[str, Any], call_id: str) -> Any:
        """The output item as recorded (``{"type": "function_call_output",
        "call_id", "output"}``)."""
        return codex_item(rec)


_LINES: dict[str, type[SessionLines]] = {CLAUDE_CODE: ClaudeCodeLines, CODEX: CodexLines}


def lines_for(fmt: str, path: Path) -> SessionLines:
    """The mapping of the session file ``path`` in format ``fmt``."""
    return _LINES[fmt](path)


def subagent_transcript(session: Path, agent_id: str) -> Path | None:
    """Where a Claude Code sub-agent's own transcript is, if it is there:
    ``<session-dir>/<session-id>/subagents/agent-<id>.jsonl`` (Claude Code 2.x)
    or ``agent-<id>.jsonl`` beside the session (1.x); None otherwise. The id
    is the one the rules record (``agents.<call>.agent_id``); only a plain
    name is looked for (never a path built from ``/`` or ``..``)."""
    if not agent_id or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", agent_id):
        return None
    name = f"agent-{agent_id}.jsonl"
    for candidate in (
        session.parent / run_id_of(session) / "subagents" / name,
        session.parent / name,
    ):
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


# -- telling what a file is --------------------------------------------------------


def _claude_code_like(rec: dict[str, Any]) -> int:
    """2: a Claude Code record (a message, a system record or progress with
    its uuid and session id), 1: one of its bookkeeping records, 0: neither."""
    t = rec.get("type")
    if type(rec.get("uuid")) is str and type(rec.get("sessionId")) is str and type(t) is str:
        return 2
    if (
        (t == "summary" and "leafUuid" in rec)
        or (t == "file-history-snapshot" and "snapshot" in rec)
        or (t == "queue-operation" and "operation" in rec)
    ):
        return 1
    return 0


def _codex_like(rec: dict[str, Any], first: bool) -> bool:
    if rec.get("type") in _CODEX_TOP and type(rec.get("payload")) is dict and "timestamp" in rec:
        return True
    # the first rollouts: a header, then bare items and {"record_type": "state"}
    return first and "instructions" in rec and "id" in rec and "timestamp" in rec


_ENVELOPE = ("seq", "run_id", "kind")
#: What the start of a Claude Code record holds before its message (which may be huge).
_CLAUDE_HINT = (b'"sessionId":', b'"parentUuid":', b'"isSidechain":')
_CODEX_HINT = re.compile(rb'\A\s*\{"timestamp":"[^"]*","type":"(?:session_meta|response_item)"')


def _read_regular(path: Path, read: Callable[[int], bytes]) -> bytes:
    """``read(fd)`` of a regular file (never waiting on a FIFO); nothing if
    it is not one or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return b""
    try:
        return read(fd) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        return b""
    finally:
        os.close(fd)


def read_head(path: Path) -> bytes:
    """The first bytes (:data:`HEAD_BYTES`) of a regular file; nothing if it
    is not one or cannot be read."""
    return _read_regular(path, lambda fd: os.pread(fd, HEAD_BYTES, 0))


def session_format_of(path: Path) -> str | None:
    """``claude-code``, ``codex`` or ``gemini`` if the file's first records
    look like a Claude Code transcript, a Codex rollout or a Gemini CLI
    session (either form), else None (an envelope
    ledger, or something else: its reader says what). A first record longer
    than the head (a file-history snapshot of 100 MB) is told by the records
    after it."""
    head = read_head(path)
    found = session_format_of_head(head)
    if found is None and len(head) >= HEAD_BYTES and b"\n" not in head:
        after = _after_first_line(path)
        if after:
            found = session_format_of_head(after)
    return found


#: How far a first line is followed to its end to read the records after it.
_LONGEST_FIRST_LINE = 1 << 30


def _after_first_line(path: Path) -> bytes:
    """The :data:`HEAD_BYTES` after the first line's end (read a chunk at a
    time, never held whole), or nothing."""

    def read(fd: int) -> bytes:
        at = HEAD_BYTES
        while at < _LONGEST_FIRST_LINE:
            chunk = os.pread(fd, HEAD_BYTES, at)
            if not chunk:
                return b""
            end = chunk.find(b"\n")
            if end >= 0:
                return os.pread(fd, HEAD_BYTES, at + end + 1)
            at += len(chunk)
        return b""

    return _read_regular(path, read)


def session_format_of_head(head: bytes) -> str | None:
    """:func:`session_format_of` told from a file's first bytes (up to
    :data:`HEAD_BYTES` of them), already read."""
    head = head[:HEAD_BYTES].removeprefix(b"\xef\xbb\xbf")
    found = _claude_or_codex(head)
    if found is None and (gemini_format_of_head(head) or looks_like_gemini_json(head)):
        return GEMINI
    return found


def _claude_or_codex(head: bytes) -> str | None:
    lines = head.split(b"\n")
    complete = lines[:-1][:_HEAD_LINES]
    if not complete:  # one long first line: tell by its start
        if all(h in head for h in _CLAUDE_HINT):
            return CLAUDE_CODE
        return CODEX if _CODEX_HINT.match(head) else None
    claude = weak = codex = 0
    for i, raw in enumerate(complete):
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # damaged: the other lines tell, and strict replay judges it
        if type(rec) is not dict:
            return None
        if all(k in rec for k in _ENVELOPE):
            return None  # a ledger
        like = _claude_code_like(rec)
        claude += like == 2
        weak += like == 1
        codex += _codex_like(rec, i == 0)
    if claude:
        return CLAUDE_CODE if not codex else None
    if codex:
        return CODEX
    return CLAUDE_CODE if weak else None
