"""One Inspect sample as envelope lines: its events in order, then its record.

Each event of the sample's transcript (``events``, or ``transcript.events``
in older logs) becomes one line: ``seq`` its place (from 1), ``kind`` its
``event`` (``sample_init``, ``model``, ``tool``, ``state``, ``store``,
``score``, ``error``, ``span_begin``, ...), ``ts`` its ``timestamp``, and the
rest of it the ``payload``, with:

- pooled model inputs put back: ``input_refs`` (ranges into the sample's
  ``events_data.messages``) become the event's ``input``, and a call's
  ``call_refs`` its request's messages (``events_data.calls``);
- attachments resolved: a string ``attachment://<hash>`` (older logs:
  ``tc://<hash>``) is the text the sample's ``attachments`` (or
  ``transcript.content``) hold for it; one that is not there stays as
  written and is named in the payload's ``missing_attachments``.

A last line, kind ``record``, carries what the log records of the sample
when it ended (``messages``, ``output``, ``store``, ``scores``, ``error``,
``limit``, ``model_usage``): the rules prove the events reach it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from replay_tui.core import strict_json

#: The last line's kind: the sample's record, as the log keeps it.
RECORD = "record"
_PREFIXES = ("attachment://", "tc://")
#: What the record line carries of the sample.
RECORD_FIELDS = ("messages", "output", "store", "scores", "error", "limit", "model_usage")


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def events_of(sample: dict[str, Any]) -> list[Any]:
    """The sample's events (``events``, or an older log's ``transcript.events``)."""
    events = sample.get("events")
    if events is None:
        transcript = sample.get("transcript")
        events = transcript.get("events") if isinstance(transcript, dict) else None
    return events if isinstance(events, list) else []


def attachments_of(sample: dict[str, Any]) -> dict[str, Any]:
    """Hash -> text: ``attachments``, and an older log's ``transcript.content``."""
    found: dict[str, Any] = {}
    transcript = sample.get("transcript")
    older = transcript.get("content") if isinstance(transcript, dict) else None
    for table in (sample.get("attachments"), older):
        if isinstance(table, dict):
            for key, value in table.items():
                found.setdefault(key, value)
    return found


def resolve(value: Any, table: dict[str, Any], missing: list[str]) -> Any:
    """``value`` with every attachment reference replaced by its text
    (a new structure where anything changed); references not in ``table``
    are kept and appended to ``missing``."""
    if isinstance(value, str):
        if value.startswith(_PREFIXES):
            name = value.split("://", 1)[1]
            if name in table:
                return table[name]
            missing.append(value)
        return value
    if isinstance(value, list):
        return [resolve(v, table, missing) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, table, missing) for k, v in value.items()}
    return value


def _pooled(pool: Any, refs: Any) -> list[Any] | None:
    """The items ``refs`` (``[[start, end], ...]``, end excluded) name in ``pool``."""
    if not isinstance(pool, list) or not isinstance(refs, list):
        return None
    out: list[Any] = []
    for ref in refs:
        if not (isinstance(ref, list) and len(ref) == 2 and all(type(x) is int for x in ref)):
            return None
        out.extend(pool[ref[0] : ref[1]])
    return out


def unpool(event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """A model event with its pooled input and call messages put back."""
    if event.get("event") != "model":
        return event
    event = dict(event)
    inputs = _pooled(data.get("messages"), event.get("input_refs"))
    if inputs is not None:
        event["input"] = inputs
        del event["input_refs"]
    call = event.get("call")
    if isinstance(call, dict) and "call_refs" in call:
        messages = _pooled(data.get("calls"), call.get("call_refs"))
        if messages is not None and isinstance(call.get("request"), dict):
            key = call.get("call_key") or "messages"
            call = {k: v for k, v in call.items() if k not in ("call_refs", "call_key")}
            call["request"] = {**call["request"], key: messages}
            event["call"] = call
    return event


def sample_run_id(header: dict[str, Any], sample: dict[str, Any]) -> str:
    """The run id of a sample's events: the eval's run, the sample, its epoch."""
    spec = obj(header.get("eval"))
    run = spec.get("run_id") or spec.get("task") or "inspect"
    return f"{run}/{sample.get('id')}:{sample.get('epoch', 1)}"


def _line(obj: dict[str, Any]) -> bytes:
    try:
        return strict_json.dumps(obj)
    except (RecursionError, TypeError, orjson.JSONEncodeError):
        # nested past what a line may hold: fails as bad_json at its seq
        head = {k: obj[k] for k in ("seq", "run_id", "kind")}
        return orjson.dumps(head)[:-1] + b',"payload":' + b"[" * 201 + b"]" * 201 + b"}"


def envelope_lines(sample: dict[str, Any], run_id: str, batch: int = 512) -> Iterator[bytes]:
    """The sample's events and record as envelope lines, ``batch`` at a time."""
    events = events_of(sample)
    table = attachments_of(sample)
    data = obj(sample.get("events_data"))
    chunk: list[bytes] = []
    for index, event in enumerate(events):
        seq = index + 1
        if not isinstance(event, dict):
            chunk.append(_line({"seq": seq, "run_id": run_id, "inspect_event": event}))
            continue
        missing: list[str] = []
        event = resolve(unpool(event, data), table, missing)
        payload = {k: v for k, v in event.items() if k not in ("event", "timestamp")}
        if missing:
            payload["missing_attachments"] = sorted(set(missing))
        line: dict[str, Any] = {"seq": seq, "run_id": run_id, "kind": event.get("event")}
        if isinstance(event.get("timestamp"), str):
            line["ts"] = event["timestamp"]
        line["payload"] = payload
        chunk.append(_line(line))
        if len(chunk) >= batch:
            yield b"\n".join(chunk) + b"\n"
            chunk = []
    missing = []
    record = {k: resolve(sample.get(k), table, missing) for k in RECORD_FIELDS}
    record["id"], record["epoch"] = sample.get("id"), sample.get("epoch", 1)
    if missing:
        record["missing_attachments"] = sorted(set(missing))
    end: dict[str, Any] = {"seq": len(events) + 1, "run_id": run_id, "kind": RECORD}
    if isinstance(sample.get("completed_at"), str):
        end["ts"] = sample["completed_at"]
    end["payload"] = record
    chunk.append(_line(end))
    yield b"\n".join(chunk) + b"\n"
