"""What a span's events and logs say, kept as its logs come (issue 45).

A model call's messages may come as one log record each (the older GenAI
conventions' ``gen_ai.user.message``, ``gen_ai.choice``, ...). Summarising
them again from the first at every new one made a span of 4,000 logs take
27 s: :class:`LogBook` keeps what :meth:`.tools.View.messages` and
:meth:`.tools.View.usage` read of them (the first inference-details pair and
usage, and the older per-message records' summaries as :func:`.messages.pair`
makes them, through :class:`Pairing`), and a log that comes last in their
order (a higher file position and no earlier time: the common case) is added
at the cost of its own parts. Any other change builds the book again from
the span's records, which gives the very same summaries (tests compare).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay_tui.reducers.otel_genai.messages import (
    DETAILS,
    LEGACY,
    Msg,
    Summary,
    has_content,
    pair,
    text_of,
    tool_calls_of,
    tool_responses_of,
)

Record = dict[str, Any]


def _dropped(msg: Msg) -> bool:
    """A message with no part, or a text part with no text (as :func:`.messages.pair` reads it)."""
    parts = msg.get("parts")
    return not parts or any(p.get("type") == "text" and not p.get("content") for p in parts)


class Pairing:
    """:func:`.messages.pair` of an input and an output that grow a message
    at a time: each message is read once, when it is added."""

    __slots__ = (
        "calls",
        "dropped",
        "ends_tool",
        "in_chunks",
        "in_content",
        "inp",
        "out",
        "out_chunks",
        "out_content",
        "qualified",
        "responses",
        "run",
    )

    def __init__(self) -> None:
        self.inp: list[Msg] = []
        self.out: list[Msg] = []
        self.dropped = False
        self.in_content = False
        self.in_chunks: list[str] = []
        self.ends_tool = False
        #: The texts of the last run of user messages with text, and whether it is still open.
        self.run: list[str] = []
        self.qualified = False
        self.responses: list[dict[str, Any]] = []
        self.out_content = False
        self.out_chunks: list[str] = []
        self.calls: list[dict[str, Any]] = []

    def add(self, side: str, msg: Msg) -> None:
        self.dropped = self.dropped or _dropped(msg)
        text = text_of([msg])
        if side == "input":
            self.inp.append(msg)
            self.in_content = self.in_content or has_content([msg])
            parts = msg.get("parts", [])
            self.ends_tool = msg.get("role") == "tool" or all(
                p.get("type") == "tool_call_response" for p in parts
            )
            if text is not None:
                self.in_chunks.append(text)
            if msg.get("role") == "user" and text:
                if self.qualified:
                    self.run.append(text)
                else:
                    self.run = [text]
                self.qualified = True
            else:
                self.qualified = False
            self.responses += tool_responses_of([msg])
        else:
            self.out.append(msg)
            self.out_content = self.out_content or has_content([msg])
            if text is not None:
                self.out_chunks.append(text)
            self.calls += tool_calls_of([msg])

    def result(self) -> list[Summary | None] | None:
        """What :func:`.messages.pair` says of the messages added."""
        if not self.in_chunks and not self.out_chunks and self.dropped:
            return pair(self.inp, self.out)  # words left out: read as not captured, whole
        got = [self._summary_in(), self._summary_out()]
        return got if got != [None, None] else None

    def _summary_in(self) -> Summary | None:
        if not self.in_content:
            return None
        user = "".join(self.run) or None
        text = ("".join(self.in_chunks) or None) if user is None else None
        responses = list(self.responses)
        return {
            "user": user,
            "text": text,
            "responses": responses,
            "ends_tool": self.ends_tool,
            "captured": bool(user or text or any(r["response"] is not None for r in responses)),
        }

    def _summary_out(self) -> Summary | None:
        if not self.out_content:
            return None
        text = "".join(self.out_chunks) or None
        calls = list(self.calls)
        captured = bool(text or any(c["arguments"] is not None for c in calls))
        return {"text": text, "calls": calls, "captured": captured}


class LogBook:
    """What one span's kept events and logs say (see the module)."""

    __slots__ = ("details_in", "details_out", "events", "last", "legacy", "logs", "usage")

    def __init__(self, events: list[Record], logs: list[Record]) -> None:
        self.events = events
        self.logs = logs
        #: The first inference-details pair's input and output that are not None.
        self.details_in: Summary | None = None
        self.details_out: Summary | None = None
        #: The first inference-details record's usage that is not None.
        self.usage: list[int] | None = None
        for rec in [*events, *logs]:
            if rec["name"] == DETAILS:
                self._details(rec)
        found = [(e["time"], 0, i, e) for i, e in enumerate(events) if e["name"] in LEGACY]
        found += [(lg["time"], 1, i, lg) for i, lg in enumerate(logs) if lg["name"] in LEGACY]
        found.sort(key=lambda x: x[:3])
        #: The last legacy record's place in their order (None: none yet).
        self.last: tuple[int, int, int] | None = found[-1][:3] if found else None
        self.legacy: Pairing | None = None
        if found or any("msgs" in e for e in events):
            self.legacy = Pairing()
            for *_, rec in found:
                self._legacy(rec)
        if any("msgs" in e for e in events):
            self.last = None  # their messages come after every record's: none can follow them

    def _details(self, rec: Mapping[str, Any]) -> None:
        said = rec["pair"]
        if said:
            if self.details_in is None:
                self.details_in = said[0]
            if self.details_out is None:
                self.details_out = said[1]
        if self.usage is None and rec["usage"] is not None:
            self.usage = rec["usage"]

    def _legacy(self, rec: Mapping[str, Any]) -> None:
        msg = rec["msg"]
        if msg and msg["parts"]:
            assert self.legacy is not None
            self.legacy.add(rec["side"], msg)

    def follows(self, log: Mapping[str, Any]) -> bool:
        """Whether ``log``, the span's new last log by file position, comes
        last in the book's order too (so :meth:`add` may take it)."""
        if log["name"] not in LEGACY:
            return True
        if self.legacy is None:
            return not any("msgs" in e for e in self.events)
        return self.last is not None and log["time"] >= self.last[0]

    def add(self, logs: list[Record], log: Record) -> None:
        """``logs`` is the book's logs and ``log`` after them (see :meth:`follows`)."""
        self.logs = logs
        if log["name"] == DETAILS:
            self._details(log)
        elif log["name"] in LEGACY:
            if self.legacy is None:
                self.legacy = Pairing()
            self.last = (log["time"], 1, len(logs) - 1)
            self._legacy(log)

    def legacy_pair(self) -> list[Summary | None] | None:
        """The older per-message records' ``[input, output]`` summaries (and
        ``gen_ai.content.prompt`` / ``.completion`` events' messages after
        them); None when the span has none."""
        if self.legacy is None:
            return None
        if not any("msgs" in e for e in self.events):
            return self.legacy.result()
        inp, out = list(self.legacy.inp), list(self.legacy.out)
        for e in self.events:
            if e["name"] == "gen_ai.content.prompt":
                inp += e["msgs"]
            elif e["name"] == "gen_ai.content.completion":
                out += e["msgs"]
        return pair(inp, out)
