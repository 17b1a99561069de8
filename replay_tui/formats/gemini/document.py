"""The older form of a Gemini CLI session: one JSON document.

Before 0.39, Gemini CLI kept a session as ``session-*.json``, the whole
conversation rewritten at each change (``{"sessionId", "projectHash",
"startTime", "lastUpdated", "messages": [...], ...}``, pretty-printed). It is
read once, whole (:func:`~replay_tui.formats.whole_file.read_whole`), and
converted to lines (:class:`~replay_tui.formats.ledger.ConvertedLedger`): the
document without its ``messages`` first (kind ``document``), then one line a
message, in order, as written; so the state after the last line is what
Gemini CLI loads from the file (its list as it is: an id written twice is
two messages there).

A newer Gemini CLI that resumes such a session writes the same session as
``session-*.jsonl`` beside it and leaves the ``.json`` in place.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.formats.gemini.lines import GeminiLines
from replay_tui.formats.sessions import RecordEvent
from replay_tui.formats.whole_file import read_whole

#: The kind of the document's first line.
DOCUMENT = "document"
#: Lines written to the converted ledger at once.
_CHUNK = 256


def is_document(head: bytes) -> bool:
    """The file is one pretty-printed document (its first line ``{``), not
    JSON lines."""
    first = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").split(b"\n", 1)[0]
    return first.strip() == b"{"


def _line(value: Any) -> bytes:
    """One value of the document as a line; one nested past what a line is
    written to stays too deep to read, the one stop a session's line can make."""
    try:
        return strict_json.dumps(value) + b"\n"
    except (RecursionError, TypeError, orjson.JSONEncodeError):
        return b'{"$why":' + b"[" * 201 + b"]" * 201 + b"}\n"


class DocumentLines(GeminiLines):
    """The converted lines of a document: the first is the document itself."""

    def event(self, rec: dict[str, Any], line: int, offset: int) -> RecordEvent:
        got = super().event(rec, line, offset)
        if line == 1:
            got.kind = DOCUMENT
            got._call = None
        return got


class Document:
    """A session document read whole: its digest and converted lines."""

    def __init__(self, path: Path) -> None:
        raw = read_whole(path)
        self.sha256 = hashlib.sha256(raw).hexdigest()
        try:  # as JSON.parse reads it: the last of a repeated key, every digit of an integer
            doc = strict_json.loads_written(raw.removeprefix(b"\xef\xbb\xbf"))
        except ValueError as exc:
            raise CannotRun(f"{path}: not a Gemini CLI session: not JSON ({exc})") from None
        if type(doc) is not dict or "sessionId" not in doc:
            raise CannotRun(
                f"{path}: not a Gemini CLI session: no sessionId in the document "
                "(Gemini CLI loads nothing from it)"
            )
        messages = doc.get("messages")
        self.head = {k: v for k, v in doc.items() if k != "messages"}
        self.messages: list[Any] = messages if type(messages) is list else []

    def __len__(self) -> int:
        return 1 + len(self.messages)

    def lines(self) -> Iterator[bytes]:
        """The document's lines, a chunk at a time."""
        yield _line(self.head)
        for at in range(0, len(self.messages), _CHUNK):
            yield b"".join(_line(m) for m in self.messages[at : at + _CHUNK])
