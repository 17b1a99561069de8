"""The tokens a Gemini CLI session spent, for ``usage``.

Gemini CLI writes a response again, whole, each time it changes (its tool
calls added, its tokens set), under the same ``id``: each response counts
once, with the tokens of its last copy. A response a rewind, a compression
or a resume's snapshot later dropped from the conversation was spent all the
same: it counts (the ``gemini`` rules' ``spent``, not their ``tokens``, which
are what the loaded conversation holds). Snapshots copy messages, and count
nothing of their own.

Gemini's figures: ``input`` (the prompt, cached part included), ``cached``,
``output``, ``thoughts``, ``tool`` (tool-use prompt) and ``total``. Priced
as Google bills them: input less cached plus tool at the input rate, cached
at the cache-read rate, output and thoughts at the output rate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replay_tui.formats.envelope import ts_seconds
from replay_tui.formats.gemini.document import is_document
from replay_tui.formats.gemini.records import MESSAGE_TYPES, TOKEN_FIELDS
from replay_tui.formats.whole_file import read_whole
from replay_tui.reducers import pricing

#: The figures, in the order of the table's columns.
GEMINI_FIELDS: tuple[str, ...] = ("input", "cached", "output", "thoughts", "tool", "total")
PROVIDER = "google"
UNKNOWN = "unknown"


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def gemini_tokens(vec: list[int]) -> pricing.Tokens:
    """A response's figures as the price book counts tokens."""
    inp, cached, out, thoughts, tool, _ = vec
    cached = min(cached, inp)
    return pricing.Tokens(input=inp - cached + tool, cache_read=cached, output=out + thoughts)


class _Response:
    __slots__ = ("at", "copies", "day", "first", "last", "model", "sum")

    def __init__(self) -> None:
        self.copies = 0
        self.sum = [0] * len(GEMINI_FIELDS)
        self.first: list[int] | None = None
        self.last: list[int] = []
        self.model = UNKNOWN
        self.day: str | None = None
        self.at: float | None = None


class GeminiReader:
    """Reads a Gemini CLI session's records for ``usage`` (a
    :class:`~replay_tui.questions.usage.FileUsage` given as ``usage``)."""

    def __init__(self, usage: Any) -> None:
        self.usage = usage
        self.responses: dict[str, _Response] = {}

    def line(self, rec: dict[str, Any], day: str | None) -> None:
        if self.usage.session_id is None and type(rec.get("sessionId")) is str:
            self.usage.session_id = rec["sessionId"]
        mid = rec.get("id")
        tokens = rec.get("tokens")
        if type(mid) is not str or type(tokens) is not dict or rec.get("type") not in MESSAGE_TYPES:
            return
        vec = [_count(tokens.get(f)) for f in GEMINI_FIELDS]
        got = self.responses.get(mid)
        if got is None:
            got = self.responses[mid] = _Response()
        got.copies += 1
        for i, n in enumerate(vec):
            got.sum[i] += n
        if got.first is None:
            got.first = vec
        got.last = vec
        model = rec.get("model")
        got.model = model if type(model) is str and model else UNKNOWN
        got.day = day or got.day
        ts = rec.get("timestamp")
        got.at = ts_seconds(ts) if type(ts) is str else got.at

    def finish(self, seen: dict[str, str] | None) -> None:
        for got in self.responses.values():
            part = self.usage.part((got.day or UNKNOWN, got.model))
            part.counted += 1
            part.lines += got.copies
            for i, n in enumerate(got.last):
                part.tokens[i] += n
            part.charge(got.model, gemini_tokens(got.last), PROVIDER, got.at)
            if got.copies > 1:
                part.streamed_messages += 1
                part.streamed_lines += got.copies - 1
                for i, n in enumerate(got.sum):
                    part.per_line_adds[i] += n - got.last[i]
        self.responses = {}


def document_records(path: Path) -> list[Any] | None:
    """The older form's messages (and its metadata first), or None when the
    file is JSON lines."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    if not is_document(head):
        return None
    try:
        doc = orjson.loads(read_whole(path).removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return []
    if type(doc) is not dict:
        return []
    messages = doc.get("messages")
    return [doc, *(messages if type(messages) is list else [])]


__all__ = ["GEMINI_FIELDS", "TOKEN_FIELDS", "GeminiReader", "document_records", "gemini_tokens"]
