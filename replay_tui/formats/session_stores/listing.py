"""Where agent sessions live: Claude Code's, Codex's and Gemini CLI's stores, listed.

- Claude Code: ``$CLAUDE_CONFIG_DIR/projects`` (default ``~/.claude/projects``),
  a folder per project (its path made a slug), a session per
  ``<session-id>.jsonl`` in it. A sub-agent's transcript is part of its
  session, not a session of its own: ``<session-id>/subagents/agent-*.jsonl``
  (2.x) and ``agent-*.jsonl`` beside the sessions (1.x) are not listed.
- Codex: ``$CODEX_HOME/sessions`` (default ``~/.codex/sessions``),
  ``YYYY/MM/DD/rollout-*.jsonl``.
- Gemini CLI: ``$GEMINI_CLI_HOME/.gemini/tmp`` (default ``~/.gemini/tmp``),
  ``<project>/chats/session-*.jsonl`` (see :mod:`.gemini`).

Listing reads what it needs and no more. :func:`find_sessions` only stats
the files, to order them (newest first, by mtime) and cut the list
(``limit``); :func:`describe` then reads, of each one listed, its first
records (at most :data:`~replay_tui.formats.sessions.HEAD_BYTES`, at most
:data:`HEAD_RECORDS` of them parsed) for its project and first prompt, and
counts its newlines by bytes, never parsing the rest. Files are opened
read-only (never waiting on a FIFO) and nothing is written anywhere.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core.safe_text import clip, escape_controls
from replay_tui.core.words import plural
from replay_tui.formats.envelope import LineError, parse_object
from replay_tui.formats.gemini.document import is_document
from replay_tui.formats.session_stores.counts import RecordCounts
from replay_tui.formats.session_stores.gemini import GeminiHead, gemini_files
from replay_tui.formats.sessions import (
    CLAUDE_CODE,
    CODEX,
    GEMINI,
    HEAD_BYTES,
    SESSION_FORMATS,
    codex_item,
    run_id_of,
    session_format_of,
    session_format_of_head,
)

#: A session whose file changed less than this many seconds ago is taken as
#: still being written (the agent is at work): it is opened following it.
LIVE_SECONDS = 10.0
#: Records of a session's head parsed, at most, to find its project and first prompt.
HEAD_RECORDS = 256
#: A first prompt is cut to this many characters (with a note of how many are hidden).
PROMPT_CHARS = 200
#: Bytes read at a time when counting a session's records.
COUNT_CHUNK = 1 << 20

NAMES = {CLAUDE_CODE: "Claude Code", CODEX: "Codex", GEMINI: "Gemini CLI"}
#: The variable that moves each tool's store.
_ENV = {CLAUDE_CODE: "CLAUDE_CONFIG_DIR", CODEX: "CODEX_HOME", GEMINI: "GEMINI_CLI_HOME"}

_O_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True)
class Store:
    """One tool's folder of sessions (absolute; it may not exist)."""

    source: str
    path: Path
    #: Named in "looked in" only when it is there (Codex's archive).
    optional: bool = False

    @property
    def env(self) -> str:
        """The variable that moves it."""
        return _ENV[self.source]


def _home_of(variable: str, default: str, env: Mapping[str, str]) -> Path:
    value = env.get(variable)
    return Path(value).expanduser() if value else Path.home() / default


def stores(source: str | None = None, env: Mapping[str, str] | None = None) -> list[Store]:
    """The stores looked in: Claude Code's, Codex's, then Gemini CLI's (or
    only ``source``'s)."""
    env = os.environ if env is None else env
    codex = _home_of("CODEX_HOME", ".codex", env).absolute()
    found = [
        Store(CLAUDE_CODE, _home_of("CLAUDE_CONFIG_DIR", ".claude", env).absolute() / "projects"),
        Store(CODEX, codex / "sessions"),
        # rollouts Codex archived (/archive, codex archive): still sessions of the user's
        Store(CODEX, codex / "archived_sessions", optional=True),
        Store(GEMINI, _home_of("GEMINI_CLI_HOME", "", env).absolute() / ".gemini" / "tmp"),
    ]
    return [s for s in found if source is None or s.source == source]


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session file in a store. From :func:`find_sessions`, what a stat
    says (``described`` False); from :func:`describe`, also what its first
    records and its newlines say."""

    path: Path
    source: str
    store: Path
    size: int
    #: Seconds since the epoch, as the file system gives it.
    mtime: float
    #: Changed within :data:`LIVE_SECONDS` when it was looked at.
    live: bool
    #: Claude Code: its records' ``cwd`` (else the project folder's slug);
    #: Codex: ``session_meta``'s ``cwd``.
    project: str | None = None
    #: The first prompt of the user, on one line, made inert and cut.
    first_prompt: str | None = None
    #: Lines (a last one without its newline counted): one record a line.
    records: int | None = None
    #: Why it cannot be read, or is not what its store holds; None if it is fine.
    problem: str | None = None
    #: Claude Code: the file's name (the session's id); Codex: ``session_meta``'s ``id``.
    session_id: str = ""
    #: Its first records were read (:func:`describe`).
    described: bool = False

    @property
    def modified(self) -> str:
        """The mtime in ISO 8601, UTC."""
        when = datetime.fromtimestamp(self.mtime, UTC)
        return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "source": self.source,
            "store": str(self.store),
            "session_id": self.session_id,
            "project": self.project,
            "first_prompt": self.first_prompt,
            "size": self.size,
            "records": self.records,
            "modified": self.modified,
            "mtime": self.mtime,
            "live": self.live,
            "problem": self.problem,
        }

    def text(self) -> str:
        """What a filter looks through: project, first prompt, path, source."""
        return "\n".join(
            (self.project or "", self.first_prompt or "", str(self.path), self.source)
        ).lower()


@dataclass(slots=True)
class Listing:
    """The stores looked in, the sessions found (newest first), how many
    there were before ``limit``, and folders that could not be read."""

    stores: list[Store]
    sessions: list[StoredSession]
    total: int = 0
    #: Per store (its path): sessions found in it (before ``limit``).
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def looked_in(self) -> str:
        """``/x/.claude/projects (not there) and /y/.codex/sessions (2 sessions)``."""
        said = []
        for store in self.stores:
            n = self.counts.get(str(store.path), 0)
            if not store.path.is_dir():
                if store.optional:
                    continue
                how = "not there"
            elif n == 0:
                how = "no sessions in it"
            else:
                how = plural(n, "session")
            said.append(f"{store.path} ({how})")
        return " and ".join(said)


# -- finding them ---------------------------------------------------------------


def _entries(folder: Path, notes: list[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except FileNotFoundError:
        return []
    except OSError as exc:
        notes.append(f"{folder}: cannot look in it: {exc.strerror or exc}")
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _claude_code_files(store: Path, notes: list[str]) -> Iterator[Path]:
    """``<project>/<session>.jsonl``; not the sub-agents' ``agent-*.jsonl``."""
    for project in _entries(store, notes):
        if not _is_dir(project):
            continue
        for entry in _entries(Path(project.path), notes):
            name = entry.name
            if name.endswith(".jsonl") and not name.startswith("agent-") and not _is_dir(entry):
                yield Path(entry.path)


def _codex_files(store: Path, notes: list[str]) -> Iterator[Path]:
    """``YYYY/MM/DD/rollout-*.jsonl``."""
    for year in _entries(store, notes):
        if not _is_dir(year):
            continue
        for month in _entries(Path(year.path), notes):
            if not _is_dir(month):
                continue
            for day in _entries(Path(month.path), notes):
                if not _is_dir(day):
                    continue
                for entry in _entries(Path(day.path), notes):
                    if not _is_dir(entry) and _is_rollout(entry.name, Path(entry.path), notes):
                        yield Path(entry.path)


def _is_rollout(name: str, path: Path, notes: list[str]) -> bool:
    """``rollout-*.jsonl``, or a ``.jsonl`` whose first records are Codex's
    (a rollout renamed); anything else is passed over, and ``notes`` say so."""
    if name.endswith(".gz"):
        why = "compressed (gunzip it to list it)"
    elif not name.endswith(".jsonl"):
        why = "not a .jsonl file"
    elif name.startswith("rollout-") or session_format_of(path) == CODEX:
        return True
    else:
        why = "its first records are not Codex's"
    notes.append(f"{path}: passed over: not a Codex rollout: {why}")
    return False


def _archived_files(store: Path, notes: list[str]) -> Iterator[Path]:
    """``archived_sessions/rollout-*.jsonl`` (or in ``YYYY/MM/DD`` folders there)."""
    if not store.is_dir():
        return
    for entry in _entries(store, notes):
        if not _is_dir(entry) and _is_rollout(entry.name, Path(entry.path), notes):
            yield Path(entry.path)
    yield from _codex_files(store, notes)


def _stat(path: Path, source: str, store: Path, now: float) -> StoredSession:
    try:
        st = os.stat(path)
    except OSError as exc:
        try:  # a link to nothing: when the link was made
            mtime = os.lstat(path).st_mtime
        except OSError:
            mtime = 0.0
        why = f"cannot read: {exc.strerror or exc}"
        return StoredSession(path, source, store, 0, mtime, False, problem=why)
    problem = None if stat.S_ISREG(st.st_mode) else "not a regular file"
    live = now - st.st_mtime < LIVE_SECONDS
    return StoredSession(
        path,
        source,
        store,
        st.st_size,
        st.st_mtime,
        live,
        problem=problem,
        session_id=run_id_of(path),
    )


def find_sessions(
    source: str | None = None,
    *,
    limit: int | None = None,
    now: float | None = None,
    env: Mapping[str, str] | None = None,
) -> Listing:
    """The sessions in the stores (or ``source``'s), newest first (the
    newest ``limit`` of them), as a stat sees them: :func:`describe` each
    for the rest. A store that is not there has no sessions."""
    if source is not None and source not in SESSION_FORMATS:
        raise ValueError(f"source {source!r}: expected one of {', '.join(SESSION_FORMATS)}")
    now = time.time() if now is None else now
    listing = Listing(stores(source, env), [])
    found: list[StoredSession] = []
    for store in listing.stores:
        if store.source == CLAUDE_CODE:
            walk = _claude_code_files
        elif store.source == GEMINI:
            walk = gemini_files
        else:
            walk = _archived_files if store.optional else _codex_files
        here = [_stat(p, store.source, store.path, now) for p in walk(store.path, listing.notes)]
        listing.counts[str(store.path)] = len(here)
        found.extend(here)
    found.sort(key=lambda s: (-s.mtime, str(s.path)))
    listing.total = len(found)
    listing.sessions = found if limit is None else found[:limit]
    return listing


def list_sessions(
    source: str | None = None,
    *,
    limit: int | None = None,
    now: float | None = None,
    env: Mapping[str, str] | None = None,
) -> Listing:
    """:func:`find_sessions`, each described."""
    listing = find_sessions(source, limit=limit, now=now, env=env)
    listing.sessions = [describe(s) for s in listing.sessions]
    return listing


def is_live(path: Path, now: float | None = None) -> bool:
    """Whether ``path`` changed within :data:`LIVE_SECONDS` (now)."""
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return False
    return (time.time() if now is None else now) - mtime < LIVE_SECONDS


# -- what one holds ---------------------------------------------------------------


def count_records(
    fd: int, size: int, head: bytes = b"", cancelled: Callable[[], bool] | None = None
) -> tuple[int, bool] | None:
    """(lines, whether the last one ends with its newline) in the first
    ``size`` bytes of ``fd``: newlines counted in chunks, a last line
    without its newline counted too. ``head``: its first bytes, already
    read. None if ``cancelled`` says so between two chunks."""
    lines = head.count(b"\n")
    pos = len(head)
    last = head[-1:]
    buf = bytearray(COUNT_CHUNK)
    while pos < size:
        if cancelled is not None and cancelled():
            return None
        want = min(COUNT_CHUNK, size - pos)
        got = os.preadv(fd, [memoryview(buf)[:want]], pos)
        if got <= 0:
            break  # cut shorter while read: what was there is counted
        lines += buf.count(b"\n", 0, got)
        last = bytes(buf[got - 1 : got])
        pos += got
    ended = last in (b"", b"\n")
    return lines + (0 if ended else 1), ended


def describe(
    session: StoredSession,
    now: float | None = None,
    cancelled: Callable[[], bool] | None = None,
    *,
    records: bool = True,
    counts: RecordCounts | None = None,
) -> StoredSession:
    """``session`` with its project, first prompt and records (or why they
    cannot be read); never raises for what a file holds or lacks.
    ``records=False``: its first records only, not the count (what costs:
    every byte is read), ``records`` left None. ``cancelled`` is asked
    between chunks of a long count: when it says so, ``session`` is given
    back as it was. ``counts``: records counted before, for a file of the
    same size and mtime (and where to remember this count)."""
    path = session.path
    try:
        fd = os.open(path, _O_READ)
    except OSError as exc:
        return replace(session, problem=f"cannot read: {exc.strerror or exc}", described=True)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return replace(session, problem="not a regular file", described=True)
        size, mtime = st.st_size, st.st_mtime
        live = (time.time() if now is None else now) - mtime < LIVE_SECONDS
        head = os.pread(fd, min(size, HEAD_BYTES), 0)
        lines: int | None = None
        ended = True
        if records:
            known = counts.get(path, size, st.st_mtime_ns) if counts is not None else None
            counted = known or count_records(fd, size, head, cancelled)
            if counted is None:
                return session
            lines, ended = counted
            if counts is not None and known is None:
                counts.put(path, size, st.st_mtime_ns, lines, ended)
    except OSError as exc:
        return replace(session, problem=f"cannot read: {exc.strerror or exc}", described=True)
    finally:
        os.close(fd)
    document = session.source == GEMINI and is_document(head)
    if session.source == GEMINI:
        told = GeminiHead(head, path, size <= len(head))
        prompt = one_line(told.prompt) if told.prompt is not None else None
        meta = _Head(told.project, prompt, told.session_id, told.problem)
    else:
        meta = _read_head(head, session.source)
    problem = meta.problem
    if problem is None and not ended and not live and not document:
        problem = f"line {lines} is cut short (no newline at its end)"
    project = meta.project
    if project is None and session.source == CLAUDE_CODE:
        project = path.parent.name
    return replace(
        session,
        size=size,
        mtime=mtime,
        live=live,
        project=project,
        first_prompt=meta.prompt,
        records=lines,
        problem=problem,
        session_id=meta.session_id or session.session_id or run_id_of(path),
        described=True,
    )


@dataclass(slots=True)
class _Head:
    project: str | None = None
    prompt: str | None = None
    session_id: str | None = None
    problem: str | None = None


_CWD = re.compile(rb'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')
_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
#: Text Claude Code writes as the user's that the user did not type.
_CLAUDE_NOT_PROMPTS = ("<local-command-", "[Request interrupted")
#: Text Codex puts in user messages itself.
_CODEX_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")


def one_line(text: str, limit: int = PROMPT_CHARS) -> str:
    """``text`` on one line (runs of white space one space), made inert
    for a terminal and cut to ``limit`` characters."""
    flat = " ".join(text[: 4 * limit + 64].split())
    return clip(escape_controls(flat), limit)


def _read_head(head: bytes, source: str) -> _Head:
    """Project, first prompt and session id from a session's first records,
    and the first problem seen there (a line that is not a JSON object, or
    a file that is not this source's)."""
    got = _Head()
    told = session_format_of_head(head) if head.strip() else source
    if told is not None and told != source:
        got.problem = f"not a {NAMES[source]} session: its first records are {NAMES[told]}'s"
    lines = head.split(b"\n")
    lines.pop()  # after the last newline: cut by the head's end, not written whole yet, or none
    fallback: str | None = None  # a command given without arguments (/clear)
    for number, raw in enumerate(lines[:HEAD_RECORDS], 1):
        rec = parse_object(raw, number, 0)  # as strictly as check reads it
        if isinstance(rec, LineError):
            if got.problem is None:
                got.problem = f"line {number}: {rec.code}: {rec.message}"
            continue
        if source == CLAUDE_CODE:
            if got.project is None and type(rec.get("cwd")) is str:
                got.project = rec["cwd"]
            if got.prompt is None:
                prompt, command = _claude_code_prompt(rec)
                if prompt is not None and command:
                    fallback = fallback or prompt
                elif prompt is not None:
                    got.prompt = prompt
        else:
            _codex_record(rec, got)
        if got.project is not None and got.prompt is not None:
            break  # what is needed is found: the rest is not read
    if got.project is None:  # a first record too long for the head (Codex's meta)
        found = _CWD.search(head)
        if found:
            try:
                cwd = orjson.loads(found.group(1))
            except orjson.JSONDecodeError:
                cwd = None
            got.project = cwd if type(cwd) is str else None
    if got.prompt is None:
        got.prompt = fallback
    if got.problem is None and told is None:
        got.problem = (
            f"not a {NAMES[source]} session: its first records are neither Claude Code's "
            "nor Codex's"
        )
    return got


def _claude_code_prompt(rec: dict[str, Any]) -> tuple[str | None, bool]:
    """(the prompt on one line, whether it is a command without arguments)
    if ``rec`` is a prompt of the user, as the ``claude_code`` rules count
    turns (:func:`replay_tui.reducers.claude_code.is_prompt`, for a main
    session); a command (``<command-name>``) is shown as typed: ``/name args``."""
    if rec.get("type") != "user" or rec.get("isMeta") is True:
        return None, False
    if rec.get("isCompactSummary") is True or rec.get("isSidechain") is True:
        return None, False
    msg = rec.get("message")
    content = msg.get("content") if type(msg) is dict else None
    if type(content) is list:
        blocks = [b for b in content if type(b) is dict]
        if any(b.get("type") == "tool_result" for b in blocks):
            return None, False
        if not any(b.get("type") in ("text", "image") for b in blocks):
            return None, False
        text = "\n".join(
            b["text"] for b in blocks if b.get("type") == "text" and type(b.get("text")) is str
        )
        if not text.strip():
            return "[image]", False
    elif type(content) is str:
        text = content
    else:
        return None, False
    if text.lstrip().startswith(_CLAUDE_NOT_PROMPTS):
        return None, False
    name = _COMMAND.search(text[:4096])
    if name:
        args = _ARGS.search(text[:65536])
        given = args.group(1).strip() if args else ""
        return one_line(f"{name.group(1).strip()} {given}"), not given
    return one_line(text), False


def _codex_record(rec: dict[str, Any], got: _Head) -> None:
    t = rec.get("type")
    item = codex_item(rec)
    if t == "session_meta" or (t is None and "instructions" in rec and "id" in rec):
        if got.project is None and type(item.get("cwd")) is str:
            got.project = item["cwd"]
        if got.session_id is None and type(item.get("id")) is str:
            got.session_id = item["id"]
        return
    if t == "turn_context" and got.project is None and type(item.get("cwd")) is str:
        got.project = item["cwd"]
        return
    if got.prompt is not None:
        return
    it = item.get("type")
    if it == "user_message" and type(item.get("message")) is str:
        got.prompt = one_line(item["message"])
    elif it == "message" and item.get("role") == "user" and "payload" not in rec:
        # the first rollouts: bare items, no user_message events
        content = item.get("content")
        text = "\n".join(
            str(p["text"])
            for p in (content if type(content) is list else ())
            if type(p) is dict and type(p.get("text")) is str
        )
        if text.strip() and not text.lstrip().startswith(_CODEX_CONTEXT):
            got.prompt = one_line(text)


def home_short(path: str) -> str:
    """A path under the home folder as ``~/...`` (for people; JSON keeps it whole)."""
    home = str(Path.home())
    if path == home or path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def clip_start(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters from its start (``…/repo/name``):
    a path's end names it."""
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]
