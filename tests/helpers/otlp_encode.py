"""OTLP/JSON export requests encoded as OTLP/protobuf, as an SDK sends them.

Written apart from :mod:`replay_tui.formats.otel.proto` (its own field
numbers, from opentelemetry-proto's .proto files), so the two check each
other. Takes the OTLP/JSON shapes the corpus holds: ids in hex, 64-bit
integers as strings or numbers, enums as numbers or names.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

_KINDS = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
_CODES = {"UNSET": 0, "OK": 1, "ERROR": 2}


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def length(number: int, data: bytes) -> bytes:
    return tag(number, 2) + varint(len(data)) + data


def string(number: int, text: Any) -> bytes:
    return length(number, str(text).encode()) if text else b""


def hex_id(number: int, text: Any) -> bytes:
    return length(number, bytes.fromhex(text)) if text else b""


def fixed64(number: int, value: Any) -> bytes:
    value = int(value or 0)
    return tag(number, 1) + struct.pack("<Q", value) if value else b""


def fixed32(number: int, value: Any) -> bytes:
    value = int(value or 0)
    return tag(number, 5) + struct.pack("<I", value) if value else b""


def uint(number: int, value: Any) -> bytes:
    value = int(value or 0)
    return tag(number, 0) + varint(value) if value else b""


def enum(number: int, value: Any, names: dict[str, int], prefix: str) -> bytes:
    if isinstance(value, str) and not value.lstrip("-").isdigit():
        value = names[value.upper().removeprefix(prefix)]
    return uint(number, value)


def any_value(value: dict[str, Any]) -> bytes:
    out = b""
    for key, item in value.items():
        if key == "stringValue":
            out = length(1, item.encode())
        elif key == "boolValue":
            out = tag(2, 0) + varint(int(bool(item)))
        elif key == "intValue":
            out = tag(3, 0) + varint(int(item))
        elif key == "doubleValue":
            out = tag(4, 1) + struct.pack("<d", float(item))
        elif key == "arrayValue":
            out = length(5, b"".join(length(1, any_value(v)) for v in item.get("values", [])))
        elif key == "kvlistValue":
            out = length(6, attributes(1, item.get("values")))
        elif key == "bytesValue":
            out = length(7, base64.b64decode(item))
    return out


def attributes(number: int, items: Any) -> bytes:
    return b"".join(
        length(number, string(1, kv.get("key")) + length(2, any_value(kv.get("value") or {})))
        for kv in items or []
    )


def scope(value: Any) -> bytes:
    value = value or {}
    return (
        string(1, value.get("name"))
        + string(2, value.get("version"))
        + attributes(3, value.get("attributes"))
        + uint(4, value.get("droppedAttributesCount"))
    )


def resource(value: Any) -> bytes:
    value = value or {}
    return attributes(1, value.get("attributes")) + uint(2, value.get("droppedAttributesCount"))


def span(sp: dict[str, Any]) -> bytes:
    status = sp.get("status") or {}
    events = b"".join(
        length(
            11,
            fixed64(1, e.get("timeUnixNano"))
            + string(2, e.get("name"))
            + attributes(3, e.get("attributes"))
            + uint(4, e.get("droppedAttributesCount")),
        )
        for e in sp.get("events") or []
    )
    links = b"".join(
        length(
            13,
            hex_id(1, link.get("traceId"))
            + hex_id(2, link.get("spanId"))
            + string(3, link.get("traceState"))
            + attributes(4, link.get("attributes"))
            + uint(5, link.get("droppedAttributesCount"))
            + fixed32(6, link.get("flags")),
        )
        for link in sp.get("links") or []
    )
    return (
        hex_id(1, sp.get("traceId"))
        + hex_id(2, sp.get("spanId"))
        + string(3, sp.get("traceState"))
        + hex_id(4, sp.get("parentSpanId"))
        + string(5, sp.get("name"))
        + enum(6, sp.get("kind"), _KINDS, "SPAN_KIND_")
        + fixed64(7, sp.get("startTimeUnixNano"))
        + fixed64(8, sp.get("endTimeUnixNano"))
        + attributes(9, sp.get("attributes"))
        + uint(10, sp.get("droppedAttributesCount"))
        + events
        + uint(12, sp.get("droppedEventsCount"))
        + links
        + uint(14, sp.get("droppedLinksCount"))
        + (
            length(
                15,
                string(2, status.get("message"))
                + enum(3, status.get("code"), _CODES, "STATUS_CODE_"),
            )
            if "status" in sp
            else b""
        )
        + fixed32(16, sp.get("flags"))
    )


def log_record(lr: dict[str, Any]) -> bytes:
    return (
        fixed64(1, lr.get("timeUnixNano"))
        + uint(2, lr.get("severityNumber"))
        + string(3, lr.get("severityText"))
        + (length(5, any_value(lr["body"])) if "body" in lr else b"")
        + attributes(6, lr.get("attributes"))
        + uint(7, lr.get("droppedAttributesCount"))
        + fixed32(8, lr.get("flags"))
        + hex_id(9, lr.get("traceId"))
        + hex_id(10, lr.get("spanId"))
        + fixed64(11, lr.get("observedTimeUnixNano"))
        + string(12, lr.get("eventName"))
    )


def _request(doc: dict[str, Any], items: str, scoped: str, records: str, record: Any) -> bytes:
    out = b""
    for rs in doc.get(items) or []:
        body = length(1, resource(rs.get("resource")))
        for ss in rs.get(scoped) or []:
            inner = length(1, scope(ss.get("scope")))
            inner += b"".join(length(2, record(r)) for r in ss.get(records) or [])
            inner += string(3, ss.get("schemaUrl"))
            body += length(2, inner)
        body += string(3, rs.get("schemaUrl"))
        out += length(1, body)
    return out


def traces_request(doc: dict[str, Any]) -> bytes:
    """``doc``'s ``resourceSpans`` as an ``ExportTraceServiceRequest``."""
    return _request(doc, "resourceSpans", "scopeSpans", "spans", span)


def logs_request(doc: dict[str, Any]) -> bytes:
    """``doc``'s ``resourceLogs`` as an ``ExportLogsServiceRequest``."""
    return _request(doc, "resourceLogs", "scopeLogs", "logRecords", log_record)
