"""A Gemini CLI session's lines as events (see :mod:`.records`).

The session file is the ledger, read in place like a Claude Code transcript
(:class:`~replay_tui.formats.sessions.SessionLines`): ``seq`` is the line
number, ``run_id`` the file name without ``.jsonl``, ``payload`` the record,
``ts`` its ``timestamp`` (a message's: metadata lines have none; a
resume's ``startTime`` is the session's, not the line's) and ``kind`` what the loader takes it
for (:func:`~.records.record_kind`).

Where Gemini CLI's loader carries on, so does this reading: a line that does
not parse is an ``unreadable`` event, a JSON value the loader does not use an
``ignored`` one (the rules say so as a finding at that line), never a stop.
Invalid UTF-8 is read as Node reads it (each bad byte a U+FFFD) and a
repeated key as ``JSON.parse`` takes it (the last one). Only a line nested
deeper than any state can be written stops the replay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.formats.envelope import Event, LineError, parse_object
from replay_tui.formats.gemini.records import (
    IGNORED,
    UNREADABLE,
    first_call_id,
    function_responses,
    record_kind,
    tool_calls,
)
from replay_tui.formats.sessions import GEMINI, SessionLines

#: Why a line is skipped, kept in the payload of its event.
WHY = "$why"


def _js_parse(raw: bytes) -> Any:
    """``raw`` as Node's ``readline`` and ``JSON.parse`` read it (bad UTF-8
    bytes replaced, the last of repeated keys kept); raises on bad JSON."""
    return orjson.loads(raw.decode("utf-8", errors="replace"))


class GeminiLines(SessionLines):
    format = GEMINI
    volatile = frozenset({"id", "timestamp", "sessionId", "startTime", "lastUpdated", "$rewindTo"})

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        if self.run_id.lower().endswith(".json"):  # the older form's document
            self.run_id = self.run_id[: -len(".json")]

    def kind_of(self, rec: dict[str, Any]) -> tuple[str, str | None]:
        if WHY in rec and len(rec) <= 2:
            return (UNREADABLE if "value" not in rec else IGNORED), None
        return record_kind(rec), first_call_id(rec)

    def parse(self, raw: bytes, line: int, offset: int) -> Event | LineError:
        rec = parse_object(raw, line, offset)
        if type(rec) is dict:
            return self.event(rec, line, offset)
        assert isinstance(rec, LineError)
        if rec.code == "bad_json" and "levels deep" in rec.message:
            return rec  # no state could hold it: the one stop
        try:
            value = _js_parse(raw)
        except orjson.JSONDecodeError:
            why = "blank line" if not raw.strip() else rec.message
            return self.event({WHY: why}, line, offset)
        if type(value) is dict:
            return self.event(value, line, offset)
        return self.event(
            {WHY: f"a JSON {type(value).__name__}, not a record", "value": value}, line, offset
        )

    def reread(self, raw: bytes, line: int, offset: int) -> Event:
        """A line that was validated, again: parsed as it was then."""
        try:
            rec = strict_json.loads_written(raw)
        except ValueError:
            got = self.parse(raw, line, offset)
            assert isinstance(got, Event)
            return got
        if type(rec) is not dict:
            got = self.parse(raw, line, offset)
            assert isinstance(got, Event)
            return got
        return self.event(rec, line, offset)

    def result_data(self, rec: dict[str, Any], call_id: str) -> Any:
        """The tool call as its ``gemini`` message records it (``id``,
        ``name``, ``args``, ``status``, ``result``, ...), or the
        ``functionResponse`` a user message sends back for it."""
        for call in tool_calls(rec):
            if call.get("id") == call_id:
                return call
        for resp in function_responses(rec.get("content")):
            if resp.get("id") == call_id:
                return {"functionResponse": resp}
        return None

    def compare_key(self, rec: dict[str, Any]) -> list[Any]:
        kind, body = super().compare_key(rec)
        got = body.get("$set")
        if type(got) is dict:
            body["$set"] = {k: v for k, v in got.items() if k != "lastUpdated"}
        return [kind, body]
