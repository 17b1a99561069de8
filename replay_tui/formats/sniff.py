"""What a file given as a run looks like, when it is not one.

``replay-tui check ticket.md`` must not replay a Markdown file as a ledger
and call it ``bad_json``: a file that is not named as a ledger is looked at
first (its first 64 KiB), and refused in one line that says what it looks
like, why that is no run, and every source a RUN can be (:data:`RUN_SOURCES`,
the list ``--help`` is made from too). Anything that could be a ledger, even
a damaged one (a first line that starts like a JSON object, in UTF-8, UTF-16
or UTF-32, or gzip bytes), is let through, for strict replay to judge with
its code as for any ledger.
"""

from __future__ import annotations

import codecs
import gzip
import re
import zlib
from pathlib import Path

import orjson

#: Bytes looked at.
HEAD = 65536

#: Names that are ledgers whatever they hold (strict replay judges them).
LEDGER_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")

_GZIP_MAGIC = b"\x1f\x8b"
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_MAGIC = (
    (b"PK\x03\x04", "a zip archive"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x7fELF", "a program (ELF binary)"),
)
_MARKDOWN = re.compile(
    r"^(?:#{1,6}\s|```|~~~|\s{0,3}[-*+]\s+\S|\s{0,3}\d+[.)]\s+\S|\|.*\||>\s|(?:=+|-{3,})\s*$)"
    r"|\[[^\]\n]+\]\([^)\s]+\)|\*\*[^*\n]+\*\*",
    re.MULTILINE,
)
_EVENT_FIELDS = ("seq", "run_id", "kind")

#: Every source a RUN can be, as (what, more about it): the one list that the
#: refusals below and ``--help`` (the description, each RUN argument) say.
RUN_SOURCES: tuple[tuple[str, str], ...] = (
    (
        "a run folder with events.jsonl",
        "the ledger, beside receipts/<call_id>.json and budget.json",
    ),
    ("a ledger file", "JSON lines, one event a line, under any name"),
    ("either gzip-compressed", "events.jsonl.gz in the folder, or the file's .gz"),
    ("a Temporal history JSON", "temporal workflow show --output json"),
    ("a Claude Code session", "~/.claude/projects/.../*.jsonl"),
    ("a Codex rollout", "~/.codex/sessions/.../rollout-*.jsonl"),
    ("a Gemini CLI session", "~/.gemini/tmp/.../chats/session-*.jsonl, or the older .json"),
    (
        "an OpenTelemetry trace or Collector file",
        "OTLP/JSON, a Jaeger or Tempo export, or the Collector file exporter's JSON lines",
    ),
    (
        "a LangGraph checkpointer database",
        "SqliteSaver's SQLite file, one thread a run: DB#thread=ID or --thread ID",
    ),
    (
        "an Inspect AI eval log",
        ".eval or .json, each sample a run: LOG#ID:EPOCH or --sample ID[:EPOCH]",
    ),
)


def run_sources(*, detail: bool = False) -> str:
    """``a run folder with events.jsonl, a ledger file, ..., or an
    OpenTelemetry trace or Collector file`` (``detail``: each with its
    note in parentheses)."""
    said = [f"{what} ({more})" if detail else what for what, more in RUN_SOURCES]
    return ", ".join(said[:-1]) + ", or " + said[-1]


#: Said after why a file is no run.
RUN_IS = "a RUN is " + run_sources()
#: Why a file that is not JSON is no run: every file a RUN can be is JSON,
#: SQLite (a LangGraph checkpointer's) or a zip (an Inspect AI ``.eval`` log).
NOT_JSON = "not JSON, and every file a RUN can be is JSON, SQLite or an Inspect AI .eval zip"
#: Why a zip is no run (an Inspect AI ``.eval`` log is read before this is asked).
NOT_AN_EVAL = (
    "a zip that is no Inspect AI .eval log (no header.json, _journal/ or samples/ in it), "
    "and every other file a RUN can be is JSON or SQLite; unzip it and give the run folder"
)
#: Why an empty file is no run (except one followed before it is written).
NO_RECORD = "no event, record or span in it"


def named_as_ledger(path: Path) -> bool:
    """``events.jsonl`` (and copies such as ``events.jsonl.1``), ``*.jsonl``,
    ``*.jsonl.gz``, ``*.ndjson``: a ledger whatever it holds."""
    name = path.name.lower()
    return name.startswith("events.jsonl") or name.endswith(LEDGER_SUFFIXES)


def _read_head(path: Path, *, gunzip: bool) -> tuple[bytes, bool] | None:
    """The first :data:`HEAD` bytes and whether there are more; None if unreadable."""
    try:
        opener = gzip.open if gunzip else open
        with opener(path, "rb") as fh:
            head = fh.read(HEAD)
            more = bool(fh.read(1))
    except (OSError, EOFError, zlib.error):
        return None  # opening it for the replay says why, in its own words
    return head, more


#: What a file looks like and why that is no run, or None: it may be a ledger.
Looks = tuple[str, str] | None


def not_a_run(path: Path, *, may_be_empty: bool = False) -> str | None:
    """Why the regular file ``path`` is not a run, as ``it looks like ...:
    why that is none (a RUN is ...)``, or None when it may be a ledger (or a
    gzip one, or cannot be read here: opening it says why)."""
    looks = describe(path, may_be_empty=may_be_empty)
    return None if looks is None else f"{looks[0]}: {looks[1]} ({RUN_IS})"


def describe(path: Path, *, may_be_empty: bool = False) -> Looks:
    """What the regular file ``path`` looks like and what to say after it,
    or None when it may be a ledger (see :func:`not_a_run`). A ``.gz``
    file is looked at decompressed."""
    gz = path.name.lower().endswith(".gz")
    got = _read_head(path, gunzip=False)
    if got is None:
        return None
    head, more = got
    if gz and head.startswith(_GZIP_MAGIC):
        unzipped = _read_head(path, gunzip=True)
        if unzipped is None:
            return None  # a damaged gzip file: GzipLedger says so
        looks = _looks(*unzipped, may_be_empty=may_be_empty)
        return None if looks is None else (f"{looks[0]}, gzip-compressed", looks[1])
    looks = _looks(head, more, may_be_empty=may_be_empty)
    if looks is None or not gz:
        return looks
    return f"{looks[0]}, not gzip data whatever its name says", looks[1]


def _looks(head: bytes, more: bool, *, may_be_empty: bool) -> Looks:
    """:func:`_looks_utf8` of ``head`` read as UTF-8 (from UTF-16 or UTF-32
    if it has their byte-order mark or starts ``{`` as UTF-16 does)."""
    if head.startswith(_GZIP_MAGIC):
        return None  # the replay says to give it a .gz name
    encoding = ""
    for bom, name in _BOMS:
        if head.startswith(bom):
            encoding = name
            head = head[len(bom) :]
            break
    else:
        if head[:2] == b"{\x00":
            encoding = "utf-16-le"
        elif head[:2] == b"\x00{":
            encoding = "utf-16-be"
    if not encoding:
        return _looks_utf8(head, more, may_be_empty=may_be_empty)
    # looked at as UTF-8: a ledger in it is refused by the replay, saying how to convert it
    looks = _looks_utf8(
        head.decode(encoding, errors="ignore").encode(), more, may_be_empty=may_be_empty
    )
    return None if looks is None else (f"{looks[0]} in {encoding[:6].upper()}", looks[1])


def _looks_utf8(head: bytes, more: bool, *, may_be_empty: bool) -> Looks:
    """What ``head`` looks like, or None if it may be the start of a ledger."""
    if not head:
        return None if may_be_empty else ("it is empty", NO_RECORD)
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8) :]
    for magic, what in _MAGIC:
        if head.startswith(magic):
            if what == "a zip archive":
                return f"it looks like {what}", NOT_AN_EVAL
            return f"it looks like {what}", NOT_JSON
    stripped = head.lstrip(b" \t\r\n")
    if not stripped:
        return None if may_be_empty else ("it holds only blank lines", NO_RECORD)
    if stripped[:1] == b"{":
        return _object_start(stripped, more)
    if b"\x00" in head or _controls(head) > len(head) // 20:
        return "it looks like binary data", NOT_JSON
    if stripped[:1] == b"[":
        return (
            "it looks like a JSON array",
            "a RUN's JSON is objects (one a line, or one document), never an array",
        )
    if not more:
        try:
            return _document(orjson.loads(stripped))
        except orjson.JSONDecodeError:
            pass
    text = head.decode("utf-8", errors="replace")
    if "\ufffd" in text[: len(text) - 1]:
        return "it looks like text that is not UTF-8", NOT_JSON
    lower = stripped[:512].lower()
    if lower.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<meta", b"<div")):
        return "it looks like HTML", NOT_JSON
    if lower.startswith((b"<?xml", b"<svg")):
        return "it looks like XML", NOT_JSON
    if lower.startswith(b"<"):
        return "it looks like HTML or XML markup", NOT_JSON
    if _MARKDOWN.search(text):
        return "it looks like Markdown text", NOT_JSON
    return "it looks like plain text", NOT_JSON


def _controls(data: bytes) -> int:
    """Control bytes other than tab, newline, carriage return and form feed."""
    return sum(1 for b in data if b < 0x20 and b not in (0x09, 0x0A, 0x0C, 0x0D))


def _object_start(data: bytes, more: bool) -> Looks:
    """A file starting ``{``: a ledger (even a damaged one), a report, a
    JSON document, or JSON lines that are not events."""
    first, _, rest = data.partition(b"\n")
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        if _is_report(obj):
            return _document(obj)
        if any(k in obj for k in _EVENT_FIELDS):
            return None
        if not rest.strip() and not more:  # one line: a JSON document
            return _document(obj)
        return (
            "it looks like JSON lines that are not events",
            "its first line is no event (no seq, run_id or kind), no Claude Code or Codex "
            "record and no OTLP export; --format jsonl replays it anyway",
        )
    if first.strip() == b"{":  # pretty-printed JSON: a document
        if more:
            return _document(None)
        try:
            return _document(orjson.loads(data))
        except orjson.JSONDecodeError:
            return None
    return None  # a first line that is not whole JSON: a damaged ledger


def _is_report(value: dict[str, object]) -> bool:
    """A ``check --json`` report (as ``compare`` recognises one)."""
    return "reader_version" in value or ("events_sha256" in value and "events" not in value)


def _document(value: object) -> Looks:
    """A JSON document, described."""
    if isinstance(value, dict):
        if _is_report(value):
            return (
                "it looks like a replay-tui check --json report",
                "compare takes two reports; the other commands take a run",
            )
        if isinstance(value.get("events"), list):
            return (
                'it looks like a JSON document with an "events" list',
                "its events are not a Temporal history's; if it is one, give --format temporal",
            )
    return (
        "it looks like a JSON document",
        'neither a Temporal history (no "events" list) nor an OpenTelemetry trace '
        '(no "resourceSpans")',
    )
