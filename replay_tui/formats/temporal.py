"""Temporal workflow histories as a ledger source.

``temporal workflow show --output json`` (and the Web UI's download) writes
``{"events": [{"eventId": "1", "eventTime": ..., "eventType": ...,
"<name>EventAttributes": {...}}, ...]}``. :func:`load_history` reads such a
file once; :class:`replay_tui.formats.ledger.ConvertedLedger` writes its events, as
envelope v1 lines, into an unlinked temporary file as it scans, and indexes
them like any ``events.jsonl``: offsets, ``pread``, a bounded LRU. The history file
itself is never written; ``events_sha256`` is the digest of its bytes.

Mapping (checked afterwards by the same envelope rules as any ledger):

- ``eventId`` -> ``seq`` (an integer: ``"7"`` becomes 7; anything else stays
  as it is and fails as ``bad_envelope``, gaps and repeats as ``seq_gap`` /
  ``seq_duplicate``);
- ``eventType`` -> ``kind``, both spellings (``WorkflowTaskScheduled`` and
  ``EVENT_TYPE_WORKFLOW_TASK_SCHEDULED``) normalised to the first;
- ``eventTime`` -> ``ts``; the ``...EventAttributes`` object -> ``payload``;
- the event it answers (``startedEventId``, ``scheduledEventId``,
  ``initiatedEventId``, ``acceptedEventId``, ``workflowTaskCompletedEventId``,
  the first present that names an earlier event) -> ``parent_seq``; a
  forward reference (a command buffered during an update, completed by a
  later workflow task) stays in the payload, never an error;
- every other field (``taskId``, ``version``, ...) is kept as an extra field.

Payloads (``{"metadata": {"encoding": <base64>}, "data": <base64>}``) are
decoded: ``json/plain`` to the JSON value, ``binary/null`` to null, UTF-8
``binary/plain`` to text; anything else stays bytes (base64, with its size).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.supervision import expect_silence
from replay_tui.formats.whole_file import MAX_DOCUMENT_BYTES, read_whole

FORMAT = "temporal"
_SHAPE = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"events"\s*:\s*\[')
_PREFIX = "EVENT_TYPE_"
_PARENT_FIELDS = (
    "startedEventId",
    "scheduledEventId",
    "initiatedEventId",
    "acceptedEventId",
    "workflowTaskCompletedEventId",
)
#: Histories are single JSON documents: a reader's limit, far above real ones.
MAX_HISTORY_BYTES = MAX_DOCUMENT_BYTES


def looks_like_history(path: Path) -> bool:
    """True if the file starts like a Temporal history export."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return _SHAPE.match(head) is not None


def normalise_kind(event_type: str) -> str:
    """``EVENT_TYPE_WORKFLOW_TASK_SCHEDULED`` -> ``WorkflowTaskScheduled``."""
    if event_type.startswith(_PREFIX) and event_type.isupper():
        words = event_type[len(_PREFIX) :].split("_")
        return "".join(w.capitalize() for w in words if w)
    return event_type


def _text(b64: str) -> str | None:
    try:
        return base64.b64decode(b64, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def decode_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """One Temporal Payload as a person wants to read it (see module doc)."""
    metadata = payload.get("metadata") or {}
    meta = {k: (_text(v) if isinstance(v, str) else None) for k, v in metadata.items()}
    encoding = meta.get("encoding") or "unknown"
    data = payload.get("data", "")
    out: dict[str, Any] = {"encoding": encoding}
    extra = {k: v for k, v in meta.items() if k != "encoding" and v is not None}
    if extra:
        out["metadata"] = extra
    if encoding == "binary/null":
        out["value"] = None
        return out
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    except (binascii.Error, ValueError):
        out["base64"] = data
        out["note"] = "data is not valid base64"
        return out
    if encoding == "json/plain":
        try:
            out["value"] = strict_json.loads(raw)
            return out
        except ValueError:
            pass
        out["note"] = "metadata says json/plain, but data is not JSON"
    elif encoding in ("binary/plain", "text/plain"):
        try:
            out["text"] = raw.decode("utf-8")
            return out
        except UnicodeDecodeError:
            pass
    out["base64"] = data
    out["size"] = len(raw)
    return out


def _is_payload(node: dict[str, Any]) -> bool:
    metadata = node.get("metadata")
    return (
        isinstance(metadata, dict)
        and set(node) <= {"metadata", "data", "externalPayloads"}
        and all(isinstance(v, str) for v in metadata.values())
        and isinstance(node.get("data", ""), str)
    )


def decode_payloads(node: Any) -> Any:
    """``node`` with every Payload inside it decoded (a new structure)."""
    if isinstance(node, dict):
        if _is_payload(node):
            return decode_payload(node)
        return {k: decode_payloads(v) for k, v in node.items()}
    if isinstance(node, list):
        return [decode_payloads(v) for v in node]
    return node


def _event_id(value: Any) -> Any:
    """``"7"`` -> 7; anything else unchanged (the envelope check names it)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    return value


def to_envelope(event: Any, run_id: str) -> dict[str, Any]:
    """One history event as an envelope v1 object."""
    if not isinstance(event, dict):
        return {"history_event": event}  # not an object: fails as bad_envelope
    out: dict[str, Any] = {"seq": _event_id(event.get("eventId")), "run_id": run_id}
    kind = event.get("eventType")
    out["kind"] = normalise_kind(kind) if isinstance(kind, str) else kind
    if "eventTime" in event:
        out["ts"] = event["eventTime"]
    attributes: Any = {}
    for key, value in event.items():
        if key.endswith("EventAttributes"):
            attributes = value
    if isinstance(attributes, dict):
        seq = out["seq"]
        for name in _PARENT_FIELDS:
            parent = _event_id(attributes.get(name))
            # only an earlier event is a parent: commands buffered while an
            # update or query ran name the workflow task completed after them,
            # a forward reference Temporal writes legally (kept in the payload)
            if type(parent) is int and parent > 0 and (type(seq) is not int or parent < seq):
                out["parent_seq"] = parent
                break
        out["payload"] = decode_payloads(attributes)
    else:
        out["payload"] = attributes  # fails as bad_envelope, as it should
    for key, value in event.items():
        if key not in ("eventId", "eventType", "eventTime") and not key.endswith("EventAttributes"):
            out[key] = value
    return out


def _too_deep(event: Any, run_id: str) -> bytes:
    """A line for an event nested too deep to convert: it fails, at its seq,
    as ``bad_json`` "nested more than 200 levels deep", like such a line in
    any ledger."""
    head = {"seq": None, "run_id": run_id, "kind": None}
    if isinstance(event, dict):
        head["seq"] = _event_id(event.get("eventId"))
        kind = event.get("eventType")
        head["kind"] = normalise_kind(kind) if isinstance(kind, str) else None
    return orjson.dumps(head)[:-1] + b',"payload":' + b"[" * 201 + b"]" * 201 + b"}"


@dataclass
class History:
    """A history file, parsed and checked, not yet converted."""

    events: list[Any]
    sha256: str
    run_id: str

    def envelope_lines(self, batch: int = 2048) -> Iterator[bytes]:
        """Envelope lines, ``batch`` events at a time (each chunk ends with a
        newline). Each event is dropped once converted, so the parsed history
        shrinks as the ledger grows."""
        events = self.events
        chunk: list[bytes] = []
        for index in range(len(events)):
            event, events[index] = events[index], None
            try:
                chunk.append(strict_json.dumps(to_envelope(event, self.run_id)))
            except (RecursionError, TypeError):  # nested deeper than can be written
                chunk.append(_too_deep(event, self.run_id))
            if len(chunk) >= batch:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
        if chunk:
            yield b"\n".join(chunk) + b"\n"
        self.events = []


def _run_id(events: list[Any], path: Path) -> str:
    first = events[0] if events and isinstance(events[0], dict) else {}
    attrs = first.get("workflowExecutionStartedEventAttributes")
    if isinstance(attrs, dict):
        for key in ("originalExecutionRunId", "firstExecutionRunId", "workflowId"):
            value = attrs.get(key)
            if isinstance(value, str) and value:
                return value
    return path.stem or "temporal-history"


def load_history(path: Path) -> History:
    """Read and parse ``path`` once; raises :class:`CannotRun` with one line.

    Converting the events is left to :meth:`History.envelope_lines`, done as
    the ledger is scanned: the app shows the first events while the rest are
    still being converted.
    """
    raw = read_whole(path, MAX_HISTORY_BYTES)
    digest = hashlib.sha256(raw).hexdigest()
    body = raw.removeprefix(b"\xef\xbb\xbf")
    # one C call over the whole document: at 2 GiB, half a minute without the GIL
    expect_silence(5 + 3 * len(body) / 100e6)
    try:
        doc = strict_json.loads(body)
    except strict_json.JSONDoubt as why:
        raise CannotRun(f"{path}: not a readable Temporal history: {why}") from None
    except orjson.JSONDecodeError as exc:
        raise CannotRun(
            f"{path}: not a readable Temporal history: not valid JSON ({exc})"
        ) from None
    del raw, body
    events = doc.get("events") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise CannotRun(f'{path}: not a Temporal history (no "events" list)')
    return History(events, digest, _run_id(events, path))
