"""The ``gemini`` rules: a Gemini CLI session's state after each line.

A Gemini CLI session (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) is
read in place as the ledger (:mod:`replay_tui.formats.gemini.lines`); the
older single-document form (``session-*.json``) is read as one event for
its metadata (``document``) and one for each message.

The state after a line is what Gemini CLI itself loads from the file cut
after that line (``loadConversationRecord``), under its names:

- ``meta``: the session's metadata as the loader merges it (``sessionId``,
  ``projectHash``, ``startTime``, ``lastUpdated``, ``kind``, ``summary``,
  ``directories``, ``memoryScratchpad``; each only once written): a
  metadata line merged over the one before (a resume writes another), a
  ``$set`` over that;
- ``messages``: the loaded messages in order, each the last copy written of
  it (``id``, ``type``, ``content``, ``toolCalls`` with ``id``, ``name``,
  ``args``, ``status``, ``result``, ``thoughts``, ``tokens``, ``model``, ...,
  as written); a message written again replaces its copy where it first
  appeared; ``{"$rewindTo": id}`` drops that message and every later one
  (every message when that id is not loaded, as the loader does: a
  finding); a ``$set`` with ``messages`` replaces them all (a snapshot);
- ``tokens``: the loaded messages' totals (``input``, ``output``, ``cached``,
  ``thoughts``, ``tool``, ``total``) and ``by_model``;
- ``spent``: the same figures over every response ever written: a rewind,
  a compression or a snapshot drops messages (a resume's snapshot rebuilds
  them without their tokens) from ``tokens``, never from ``spent``;
- ``loaded``: whether the loader returns a session at all (it needs a
  ``sessionId`` and a ``projectHash``); ``form``: ``jsonl`` or ``json``.

Tolerant as Gemini CLI is: a line that does not parse, a JSON value it does
not use, a rewind to a message not loaded, is a finding at that line
(``rule_warning``) and the replay goes on, the state what the loader holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.core.words import plural
from replay_tui.formats.gemini.records import (
    IGNORED,
    MESSAGE,
    MESSAGE_TYPES,
    REWIND,
    SESSION,
    SET,
    SNAPSHOT,
    TOKEN_FIELDS,
    TOOL_RESULT,
    UNREADABLE,
    content_text,
    function_responses,
    tool_calls,
)
from replay_tui.formats.gemini.records import KINDS as LINE_KINDS
from replay_tui.reducers.base import CallFacts, Context, State, StateView
from replay_tui.reducers.gemini import loaded as load
from replay_tui.reducers.sessions.rules import SessionRules, one_line

if TYPE_CHECKING:
    from replay_tui.envelope import Event

#: The older form's first event: the document without its messages.
DOCUMENT = "document"
KINDS = LINE_KINDS | {DOCUMENT}
MESSAGE_KINDS = MESSAGE_TYPES | {MESSAGE, TOOL_RESULT}
#: Tool call statuses that say the call is over and failed.
_FAILED = frozenset({"error", "cancelled"})
#: ... and those that say it has not ended yet.
_OPEN = frozenset({"scheduled", "validating", "awaiting_approval", "executing"})
#: The argument that says what a call does, by tool.
_INPUT_KEYS = {
    "run_shell_command": "command",
    "read_file": "file_path",
    "write_file": "file_path",
    "replace": "file_path",
    "list_directory": "dir_path",
    "glob": "pattern",
    "search_file_content": "pattern",
    "grep_search": "pattern",
    "web_fetch": "prompt",
    "google_web_search": "query",
}


def input_summary(name: str, args: Any) -> str:
    """What a call does, in a few words: the command, the file, ..."""
    if not isinstance(args, dict):
        return one_line(args) if isinstance(args, str) else ""
    value = args.get(_INPUT_KEYS.get(name, ""))
    if not isinstance(value, str):
        value = next((v for v in args.values() if isinstance(v, str)), None)
    if value is None and args:
        value = orjson.dumps(args).decode()
    return one_line(value) if isinstance(value, str) else ""


def call_status(call: Mapping[str, Any]) -> str:
    """``ok``, ``error`` or ``requested`` (not over yet) by the call's status."""
    status = call.get("status")
    if status in _FAILED:
        return "error"
    if status in _OPEN:
        return "requested"
    return "ok"


def response_status(resp: dict[str, Any]) -> str:
    """``error`` when a ``functionResponse`` sends an error back, else ``ok``."""
    body = resp.get("response")
    return "error" if isinstance(body, dict) and "error" in body else "ok"


def _figures(tokens: dict[str, Any]) -> str:
    return f"{tokens['total']:,} tokens"


class GeminiRules(SessionRules):
    name = "gemini"
    version = "1.0.0"
    kinds = KINDS
    #: The source these rules are for: never chosen for an events.jsonl by its first kind.
    source_format = "gemini"

    def initial_state(self) -> State:
        return {
            "form": "jsonl",
            "loaded": False,
            "meta": {},
            "messages": [],
            "tokens": load.zero_tokens(),
            "spent": load.zero_tokens(),
        }

    def summary(self, state: StateView) -> str:
        """Where the conversation is: ``new``, ``awaiting_model`` (a prompt or
        tool results sent), ``tools_running``, ``awaiting_user``; ``unloaded``
        while the loader would return nothing."""
        if not state["loaded"]:
            return "unloaded"
        messages = state["messages"]
        if not messages:
            return "new"
        last = messages[-1]
        if not isinstance(last, Mapping):
            return "awaiting_user"
        if last.get("type") == "user":
            return "awaiting_model"
        if any(call_status(c) == "requested" for c in tool_calls(last)):
            return "tools_running"
        return "awaiting_user"

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        kind = event.kind
        rec = event.payload
        if state["form"] == "json" and kind != DOCUMENT:
            if kind == IGNORED and "$why" in rec and "value" in rec:
                load.append_message(state, rec["value"])
            elif kind != UNREADABLE:
                load.append_message(state, rec)
        elif kind in MESSAGE_KINDS:
            load.set_message(state, ctx, rec, spend=True)
        elif kind == REWIND:
            target = rec["$rewindTo"]
            if load.rewind(state, ctx, target) is None:
                ctx.warn(
                    f"$rewindTo {target}: no message of that id is loaded; Gemini CLI's "
                    "loader then drops every message, and so does this state"
                )
        elif kind in (SET, SNAPSHOT):
            fields = rec["$set"]
            if kind == SNAPSHOT:
                load.snapshot(state, ctx, fields["messages"])
            load.merge_meta(state, fields)
        elif kind == SESSION:
            load.merge_meta(state, rec)
            if type(rec.get("messages")) is list:
                load.snapshot(state, ctx, rec["messages"], clear=False)
        elif kind == DOCUMENT:
            state["form"] = "json"
            load.merge_meta(state, rec)
        elif kind == UNREADABLE:
            ctx.warn(
                f"line {event.line} is not JSON ({rec.get('$why')}): Gemini CLI's loader "
                "skips it, and so does this state"
            )
        elif kind == IGNORED:
            what = rec.get("$why") or "no message, metadata, $set or $rewindTo"
            ctx.warn(
                f"line {event.line} is {what}: Gemini CLI's loader skips it, and so does this state"
            )
        now = load.loaded(state)
        if state["loaded"] != now:
            state["loaded"] = now
        return state

    # -- prose ------------------------------------------------------------
    def explain(self, before: StateView, event: Event, after: StateView) -> str:
        kind = event.kind
        was = [m.get("id") if isinstance(m, Mapping) else None for m in before["messages"]]
        now = [m.get("id") if isinstance(m, Mapping) else None for m in after["messages"]]
        spent = after["spent"]["total"] - before["spent"]["total"]
        money = f"; {spent:+,} tokens spent" if spent else ""
        if kind == REWIND:
            dropped = len(was) - len(now)
            return (
                f"rewind to {event.payload['$rewindTo']}: {dropped} message"
                f"{'' if dropped == 1 else 's'} dropped, {len(now)} left; "
                f"loaded tokens {_figures(before['tokens'])} -> {_figures(after['tokens'])}"
            )
        if kind == SNAPSHOT:
            kept = set(now)
            gone = sum(1 for i in was if i not in kept)
            rebuilt = sum(1 for i in now if i in set(was))
            return (
                f"snapshot: the conversation is {len(now)} messages "
                f"({rebuilt} as before, {len(now) - rebuilt} new, {gone} dropped); "
                f"loaded tokens {_figures(before['tokens'])} -> {_figures(after['tokens'])}"
            )
        if kind in MESSAGE_KINDS:
            mid = event.payload.get("id")
            if after["form"] == "jsonl" and mid in was:
                return f"{kind} {mid} written again: its copy replaced in place{money}"
            return f"{kind} {mid}: message {len(now)} of the conversation{money}"
        if kind in (SET, SESSION, DOCUMENT):
            fields = event.payload.get("$set", event.payload)
            keys = [k for k in (fields if isinstance(fields, dict) else {}) if k != "messages"]
            head = {SET: "$set", SESSION: "session metadata", DOCUMENT: "the document"}[kind]
            words = f"{head}: {', '.join(keys) or 'nothing'}"
            if kind == SESSION and before["loaded"]:
                words += " (a resume: merged over the metadata before)"
            return words
        if kind in (UNREADABLE, IGNORED):
            return f"{kind}: skipped, as Gemini CLI's loader skips it"
        return kind

    def still_open(self, state: StateView) -> list[str]:
        """Tool calls of the last loaded message that have not ended."""
        messages = state["messages"]
        last = messages[-1] if len(messages) else None
        if not isinstance(last, Mapping):
            return []
        return [
            f"{c.get('id')} {c.get('name')} {input_summary(str(c.get('name')), c.get('args'))}"
            f" is {c.get('status')}".replace("  ", " ")
            for c in tool_calls(last)
            if call_status(c) == "requested"
        ]

    def notes(self, state: StateView) -> list[str]:
        """What the loaded view leaves out of what was spent."""
        spent, tokens = state["spent"]["total"], state["tokens"]["total"]
        if spent == tokens:
            return []
        return [
            f"{spent:,} tokens were spent in this session, {tokens:,} of them by the "
            "messages Gemini CLI loads now: a rewind, a compression or a resume's "
            "snapshot dropped the rest from its view"
        ]

    def call_of(self, event: Event) -> str | None:
        """A call is the ``gemini`` message that makes it (with its result)
        and the user message that sends the result back."""
        return event.call_id if event.kind in ("gemini", TOOL_RESULT, MESSAGE) else None

    def call_facts(self, event: Event) -> CallFacts | None:
        rec = event.payload
        cid = event.call_id
        if cid is None:
            return None
        for call in tool_calls(rec):
            if call.get("id") == cid:
                name = str(call.get("name"))
                status = call_status(call)
                return CallFacts(
                    tool=name,
                    arg=input_summary(name, call.get("args")) or None,
                    status=None if status == "requested" else status,
                )
        for resp in function_responses(rec.get("content")):
            if resp.get("id") == cid:
                return CallFacts(status=response_status(resp))
        return None

    def row_summary(self, event: Event) -> str | None:
        kind = event.kind
        rec = event.payload
        if kind == TOOL_RESULT:
            parts = [
                f"{r.get('name')} {response_status(r)}"
                for r in function_responses(rec.get("content"))
            ]
            return one_line(", ".join(parts), 200)
        if kind in MESSAGE_KINDS:
            text = content_text(rec.get("content"))
            calls = [
                f"{c.get('name')}({input_summary(str(c.get('name')), c.get('args'))})"
                for c in tool_calls(rec)
            ]
            said = " ".join([text.strip(), *(f"→ {c}" for c in calls)]).strip()
            return one_line(said, 200) if said else None
        if kind == REWIND:
            return f"rewind to {rec.get('$rewindTo')}"
        if kind == SNAPSHOT:
            return f"snapshot of {plural(len(rec['$set']['messages']), 'message')}"
        if kind == SET:
            fields = rec["$set"]
            if isinstance(fields, dict):
                return one_line(" ".join(f"{k}={v}" for k, v in fields.items()), 200)
            return None
        if kind in (SESSION, DOCUMENT):
            return " ".join(str(rec[k]) for k in ("sessionId", "kind", "startTime") if k in rec)
        if kind in (UNREADABLE, IGNORED):
            return one_line(str(rec.get("$why")), 200)
        return None

    def recorded_call(self, state: State, event: Event) -> tuple[str, dict[str, Any]] | None:
        """The call ``event`` makes or answers, with its result on this very
        line (Gemini CLI writes a call with its result, then the result again
        as a ``functionResponse``)."""
        cid = event.call_id
        if cid is None:
            return None
        rec = event.payload
        for call in tool_calls(rec):
            if call.get("id") == cid:
                name = str(call.get("name"))
                done = "result" in call and call_status(call) != "requested"
                return cid, {
                    "tool": name,
                    "status": call_status(call),
                    "input": input_summary(name, call.get("args")),
                    "seq": event.seq,
                    "result_seq": event.seq if done else None,
                }
        for resp in function_responses(rec.get("content")):
            if resp.get("id") == cid:
                return cid, {
                    "tool": str(resp.get("name")),
                    "status": response_status(resp),
                    "input": "",
                    "seq": None,
                    "result_seq": event.seq,
                }
        return None

    def _explain(self, before: StateView, event: Event, after: StateView) -> str:
        return self.explain(before, event, after)


def token_figures(totals: dict[str, Any]) -> dict[str, Any]:
    """``totals`` without ``by_model``: the six figures."""
    return {k: totals[k] for k in TOKEN_FIELDS}


REDUCER = GeminiRules()
