"""OTLP/protobuf export requests as the OTLP/JSON the Collector writes.

``replay-tui receive`` takes what SDKs send to ``/v1/traces`` and
``/v1/logs``; the Python, Go and Java SDKs send protobuf by default. This is
a small decoder of the protobuf wire format for the two requests
(``ExportTraceServiceRequest``, ``ExportLogsServiceRequest``: field numbers
from opentelemetry-proto's ``trace/v1/trace.proto``, ``logs/v1/logs.proto``,
``common/v1/common.proto`` and ``resource/v1/resource.proto``), with no
dependency: its result is the JSON document the Collector's file exporter
writes for the same request, so the line a trace file gets is the same
whichever encoding the agent chose.

That shape: field names in lowerCamelCase, in the order the .proto declares
them; ids as lower-case hex (none, or all zeros, left out); 64-bit integers
(times, ``intValue``) as decimal strings; enums (``kind``, ``status.code``,
``severityNumber``) as numbers; ``bytesValue`` as base64; a field at its
default (``""``, 0, an empty list) left out, except in an ``AnyValue`` (which
says which value it holds, even ``""``); a message field (``resource``,
``scope``, ``status``, ``body``, a key's ``value``) always there, ``{}`` when
not sent. Fields this decoder does not know (newer ones, the long-gone
``instrumentation_library_*``) are skipped, as protobuf readers do.

A body that is not such a request (a truncated field, a length past the
end, a wire type a field cannot have, nesting deeper than ``MAX_DEPTH``) is
a :class:`ProtoError`, in words saying where. Decoding is one pass over the
body (a field's bytes are sliced once, where it is a leaf) and its memory is
counted as it grows: past ``budget`` bytes it stops, :class:`TooBig` (two
bytes of protobuf, an empty message, become a dict of some hundred bytes,
so a small body may hold a very large document).
"""

from __future__ import annotations

import base64
import math
import struct
import sys
from dataclasses import dataclass, field
from typing import Any

#: Messages nested deeper than this (an attribute's arrays and maps in
#: arrays and maps...) are refused: the JSON written stays within what JSON
#: readers take (orjson writes 255 levels at most).
MAX_DEPTH = 100

# What a field holds, and so its wire type and its JSON form.
STRING, HEX, BASE64, FIXED64, INT64, UINT32, FIXED32, ENUM, BOOL, DOUBLE, MESSAGE = range(11)
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_WIRE = {
    STRING: _LEN,
    HEX: _LEN,
    BASE64: _LEN,
    MESSAGE: _LEN,
    FIXED64: _I64,
    DOUBLE: _I64,
    FIXED32: _I32,
    INT64: _VARINT,
    UINT32: _VARINT,
    ENUM: _VARINT,
    BOOL: _VARINT,
}
_WIRE_NAMES = {0: "varint", 1: "64-bit", 2: "length-delimited", 3: "group", 4: "group", 5: "32-bit"}
_U64 = (1 << 64) - 1
#: A field's default, in its JSON form: left out (a repeated field is there only when sent).
_DEFAULTS: dict[int, Any] = {
    STRING: "",
    HEX: "",
    BASE64: "",
    FIXED64: "0",
    INT64: "0",
    UINT32: 0,
    FIXED32: 0,
    ENUM: 0,
    BOOL: False,
    DOUBLE: 0.0,
}


class ProtoError(ValueError):
    """A body that is not the protobuf request it was sent as."""


class TooBig(ProtoError):
    """A request whose decoding would take more memory than it was allowed."""


class _Budget:
    """The bytes of memory a decoding may still take (``sys.getsizeof`` of
    what it makes, and a slot for each)."""

    __slots__ = ("left", "total")

    def __init__(self, total: int | None) -> None:
        self.total = total
        self.left = total if total is not None else -1

    def take(self, made: object) -> None:
        if self.total is None:
            return
        self.left -= sys.getsizeof(made) + 8
        if self.left < 0:
            raise TooBig(f"decoding it takes more than {self.total} bytes of memory")


@dataclass(slots=True)
class Field:
    name: str
    kind: int
    repeated: bool = False
    message: Message | None = None


@dataclass(slots=True)
class Message:
    """A message's fields by number, in the order the .proto declares them
    (the JSON's order). A ``oneof`` message (``AnyValue``) keeps the one
    value it was sent, default or not."""

    name: str
    fields: dict[int, Field] = field(default_factory=dict)
    oneof: bool = False


def _message(name: str, *fields: tuple[int, Field], oneof: bool = False) -> Message:
    return Message(name, dict(fields), oneof)


def _attributes(number: int, key_value: Message) -> tuple[int, Field]:
    return number, Field("attributes", MESSAGE, True, key_value)


def _dropped(number: int, what: str = "Attributes") -> tuple[int, Field]:
    return number, Field(f"dropped{what}Count", UINT32)


def _common() -> tuple[Message, Message, Message, Message]:
    """common.proto's ``AnyValue`` and ``KeyValue`` (which refer to each
    other through their lists), ``Resource`` and ``InstrumentationScope``."""
    any_value = Message("AnyValue", oneof=True)
    array = _message("ArrayValue", (1, Field("values", MESSAGE, True, any_value)))
    key_value = _message(
        "KeyValue", (1, Field("key", STRING)), (2, Field("value", MESSAGE, message=any_value))
    )
    kvlist = _message("KeyValueList", (1, Field("values", MESSAGE, True, key_value)))
    any_value.fields.update(
        {
            1: Field("stringValue", STRING),
            2: Field("boolValue", BOOL),
            3: Field("intValue", INT64),
            4: Field("doubleValue", DOUBLE),
            5: Field("arrayValue", MESSAGE, message=array),
            6: Field("kvlistValue", MESSAGE, message=kvlist),
            7: Field("bytesValue", BASE64),
        }
    )
    resource = _message("Resource", _attributes(1, key_value), _dropped(2))
    scope = _message(
        "InstrumentationScope",
        (1, Field("name", STRING)),
        (2, Field("version", STRING)),
        _attributes(3, key_value),
        _dropped(4),
    )
    return any_value, key_value, resource, scope


def _build() -> tuple[Message, Message]:
    """The two requests' schemas."""
    any_value, key_value, resource, scope = _common()

    def attributes(number: int) -> tuple[int, Field]:
        return _attributes(number, key_value)

    event = _message(
        "Span.Event",
        (1, Field("timeUnixNano", FIXED64)),
        (2, Field("name", STRING)),
        attributes(3),
        _dropped(4),
    )
    link = _message(
        "Span.Link",
        (1, Field("traceId", HEX)),
        (2, Field("spanId", HEX)),
        (3, Field("traceState", STRING)),
        attributes(4),
        _dropped(5),
        (6, Field("flags", FIXED32)),
    )
    status = _message("Status", (2, Field("message", STRING)), (3, Field("code", ENUM)))
    span = _message(
        "Span",
        (1, Field("traceId", HEX)),
        (2, Field("spanId", HEX)),
        (3, Field("traceState", STRING)),
        (4, Field("parentSpanId", HEX)),
        (16, Field("flags", FIXED32)),
        (5, Field("name", STRING)),
        (6, Field("kind", ENUM)),
        (7, Field("startTimeUnixNano", FIXED64)),
        (8, Field("endTimeUnixNano", FIXED64)),
        attributes(9),
        _dropped(10),
        (11, Field("events", MESSAGE, True, event)),
        _dropped(12, "Events"),
        (13, Field("links", MESSAGE, True, link)),
        _dropped(14, "Links"),
        (15, Field("status", MESSAGE, message=status)),
    )
    log = _message(
        "LogRecord",
        (1, Field("timeUnixNano", FIXED64)),
        (11, Field("observedTimeUnixNano", FIXED64)),
        (2, Field("severityNumber", ENUM)),
        (3, Field("severityText", STRING)),
        (5, Field("body", MESSAGE, message=any_value)),
        attributes(6),
        _dropped(7),
        (8, Field("flags", FIXED32)),
        (9, Field("traceId", HEX)),
        (10, Field("spanId", HEX)),
        (12, Field("eventName", STRING)),
    )

    def request(name: str, items: str, scoped: str, records: str, record: Message) -> Message:
        scoped_message = _message(
            scoped[0].upper() + scoped[1:],
            (1, Field("scope", MESSAGE, message=scope)),
            (2, Field(records, MESSAGE, True, record)),
            (3, Field("schemaUrl", STRING)),
        )
        resourced = _message(
            items[0].upper() + items[1:],
            (1, Field("resource", MESSAGE, message=resource)),
            (2, Field(scoped, MESSAGE, True, scoped_message)),
            (3, Field("schemaUrl", STRING)),
        )
        return _message(name, (1, Field(items, MESSAGE, True, resourced)))

    return (
        request("ExportTraceServiceRequest", "resourceSpans", "scopeSpans", "spans", span),
        request("ExportLogsServiceRequest", "resourceLogs", "scopeLogs", "logRecords", log),
    )


TRACES_REQUEST, LOGS_REQUEST = _build()


def decode_traces(body: bytes, budget: int | None = None) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` as OTLP/JSON (``resourceSpans``
    always there), made in at most ``budget`` bytes of memory (else
    :class:`TooBig`; None: no bound)."""
    return {"resourceSpans": [], **_decode(body, TRACES_REQUEST, budget)}


def decode_logs(body: bytes, budget: int | None = None) -> dict[str, Any]:
    """An ``ExportLogsServiceRequest`` as OTLP/JSON (``resourceLogs`` always there)."""
    return {"resourceLogs": [], **_decode(body, LOGS_REQUEST, budget)}


def _decode(body: bytes, schema: Message, budget: int | None) -> dict[str, Any]:
    try:
        return _read(body, 0, len(body), schema, 0, _Budget(budget))
    except RecursionError:  # a stack smaller than MAX_DEPTH needs
        raise ProtoError(f"messages nested deeper than {MAX_DEPTH}") from None


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end:
            raise ProtoError(f"a varint cut short at byte {pos}")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & _U64, pos
        shift += 7
        if shift >= 70:
            raise ProtoError(f"a varint longer than 10 bytes at byte {pos}")


def _read(
    buf: bytes, pos: int, end: int, schema: Message, depth: int, budget: _Budget
) -> dict[str, Any]:
    """The message in ``buf[pos:end]``, as OTLP/JSON."""
    if depth > MAX_DEPTH:
        raise ProtoError(f"messages nested deeper than {MAX_DEPTH}")
    found: dict[str, Any] = {}
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtoError(f"field number 0 at byte {at}")
        value: int
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
            if pos + size > end:
                raise ProtoError(f"a {size * 8}-bit field cut short at byte {at}")
            value = int.from_bytes(buf[pos : pos + size], "little")
            pos += size
        elif wire == _LEN:
            value, pos = _varint(buf, pos, end)
            if value > end - pos:
                raise ProtoError(f"field {number} at byte {at} runs past the end of its message")
            value, pos = pos, pos + value  # value: where the field's bytes start
        else:
            raise ProtoError(f"wire type {wire} at byte {at} (not in OTLP)")
        spec = schema.fields.get(number)
        if spec is None:
            continue  # a field this decoder does not know: skipped
        if wire != _WIRE[spec.kind]:
            raise ProtoError(
                f"{schema.name}.{spec.name} at byte {at} sent as {_WIRE_NAMES[wire]}, "
                f"not {_WIRE_NAMES[_WIRE[spec.kind]]}"
            )
        converted = _value(buf, spec, value, pos, depth, budget)
        if spec.kind != MESSAGE:
            budget.take(converted)
        if spec.repeated:
            found.setdefault(spec.name, []).append(converted)
        elif schema.oneof:
            found = {spec.name: converted}  # the last one sent is the value
        else:
            found[spec.name] = converted
    result = _ordered(found, schema, budget)
    budget.take(result)
    return result


def _value(buf: bytes, spec: Field, value: int, end: int, depth: int, budget: _Budget) -> Any:
    """A field's JSON form: ``value`` is the number read, or for a
    length-delimited field where its bytes start (they end at ``end``)."""
    kind = spec.kind
    if kind == STRING:
        return buf[value:end].decode("utf-8", "replace")
    if kind == MESSAGE:
        assert spec.message is not None
        return _read(buf, value, end, spec.message, depth + 1, budget)
    if kind == HEX:
        raw = buf[value:end]
        return raw.hex() if raw.strip(b"\0") else ""
    if kind == BASE64:
        return base64.b64encode(buf[value:end]).decode("ascii")
    if kind == FIXED64:
        return str(value)
    if kind == INT64:
        return str(value - (1 << 64) if value >> 63 else value)
    if kind == ENUM:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >> 31 else value
    if kind == UINT32:
        return value & 0xFFFFFFFF
    if kind == BOOL:
        return value != 0
    if kind == DOUBLE:
        number: float = struct.unpack("<d", value.to_bytes(8, "little"))[0]
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        return number
    return value  # FIXED32


def _ordered(found: dict[str, Any], schema: Message, budget: _Budget) -> dict[str, Any]:
    """``found`` in the .proto's order, defaults left out (see the module)."""
    result: dict[str, Any] = {}
    for spec in schema.fields.values():
        name = spec.name
        if name in found:
            value = found[name]
            if schema.oneof or spec.kind == MESSAGE or value != _DEFAULTS[spec.kind]:
                result[name] = value
        elif spec.kind == MESSAGE and not spec.repeated and not schema.oneof:
            result[name] = {}
            budget.take(result[name])
    return result


def encode_status(code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (``code``: a gRPC code, 3 for an invalid
    argument), as OTLP/HTTP answers a protobuf request it refuses."""
    text = message.encode("utf-8", "replace")
    out = bytearray()
    if code:
        out += b"\x08" + _encode_varint(code & _U64)
    if text:
        out += b"\x12" + _encode_varint(len(text)) + text
    return bytes(out)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
