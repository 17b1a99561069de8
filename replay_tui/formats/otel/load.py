"""OpenTelemetry traces in the shapes they are exported in, as one normal form.

The shapes, told apart by content (never by name):

- an OTLP/JSON document: ``{"resourceSpans": [...], "resourceLogs": [...]}``
  (an ``ExportTraceServiceRequest`` and/or ``ExportLogsServiceRequest``);
- the OpenTelemetry Collector's file exporter: the same, one export request
  a line (a file that grows);
- a Grafana Tempo export: ``{"batches": [<ResourceSpans>, ...]}`` (old OTLP
  names: ``instrumentationLibrarySpans``; times as JSON numbers);
- a Jaeger JSON export: ``{"data": [{"traceID", "spans", "processes"}]}``
  (times in microseconds, attributes as ``tags``, the OTLP span fields the
  exporter folded into tags taken back out).

The normal form (:class:`Span`, :class:`Log`): ids lower-case hex (base64
decoded, Jaeger's dropped leading zeros put back, all zeros for none), times
integer nanoseconds (a time OTLP cannot hold, past its fixed64 or before
the epoch, is kept as given and the span or log record ``refused``, to fail
strict replay at its place), attributes a flat dict of plain JSON values (OTLP's
``AnyValue`` decoded all the way down), each span and log with its resource
attributes, its instrumentation scope's name and its position in the file
(``copy``: the last tie-break, and which of two copies of a span came first).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

#: The shapes a trace comes in.
OTLP, OTLP_LINES, TEMPO, JAEGER = "otlp", "otlp-lines", "tempo", "jaeger"

_HEX = re.compile(r"[0-9a-fA-F]+\Z")
_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_CODES = {0: "UNSET", 1: "OK", 2: "ERROR"}
K = TypeVar("K", bound=Hashable)


@dataclass(slots=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(slots=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str  # "" when the span names no parent
    name: str
    kind: str  # INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER or UNSPECIFIED
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    status_code: str  # UNSET, OK or ERROR
    status_message: str
    events: list[SpanEvent] = field(default_factory=list)
    flags: int = 0  # W3C flags: 0x100 parent remoteness known, 0x200 the parent is remote
    copy: int = 0  # position in the file
    refused: str = ""  # why the span cannot be replayed (a time OTLP cannot hold)

    @property
    def key(self) -> tuple[str, str]:
        return self.trace_id, self.span_id


@dataclass(slots=True)
class Log:
    trace_id: str
    span_id: str  # "" when the record is tied to no span
    time_ns: int  # timeUnixNano, else observedTimeUnixNano
    event_name: str | None
    body: Any
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    copy: int = 0
    refused: str = ""  # why the record cannot be replayed (a time OTLP cannot hold)


def norm_id(value: Any) -> str:
    """An id as lower-case hex: OTLP/JSON writes hex, protobuf JSON and some
    Tempo versions base64, Jaeger may drop leading zeros; all zeros is none."""
    if not value or not isinstance(value, str | int):
        return ""
    text = str(value).strip()
    hexed = bool(_HEX.match(text))
    if not hexed and len(text) in (12, 24):
        with contextlib.suppress(binascii.Error, ValueError):
            text = base64.b64decode(text, validate=True).hex()
    elif hexed and len(text) < 32 and len(text) not in (16,):
        text = text.zfill(16 if len(text) <= 16 else 32)
    text = text.lower()
    return "" if set(text) <= {"0"} else text


#: OTLP's times are fixed64 nanoseconds since the epoch.
MAX_TIME_NS = 2**64 - 1


class _Times:
    """Reads the times of one span or log record, noting the first that
    OTLP cannot hold (an integer past 64 bits is read exactly, never
    rounded: it is refused, never shown as another time)."""

    __slots__ = ("refused",)

    def __init__(self) -> None:
        self.refused = ""

    def __call__(self, holder: dict[str, Any], name: str, scale: int = 1) -> int:
        given = holder.get(name)
        ns = to_int(given) * scale
        if not 0 <= ns <= MAX_TIME_NS and not self.refused:
            shown = str(given)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            self.refused = (
                f"{name} {shown} is not a time OTLP can hold "
                f"(nanoseconds since the epoch, 0 to {MAX_TIME_NS})"
            )
        return ns


def to_int(value: Any, default: int = 0) -> int:
    """An int64 field: a JSON string in OTLP/JSON, a number in Tempo (an
    integer past 64 bits exactly, as given)."""
    if value is None or value == "" or isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return default


def any_value(value: Any) -> Any:
    """OTLP's ``AnyValue`` as a plain JSON value (``{}``: null)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return to_int(value["intValue"])
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError):
            return value["doubleValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        inner = value["arrayValue"] if isinstance(value["arrayValue"], dict) else {}
        return [any_value(v) for v in inner.get("values") or []]
    if "kvlistValue" in value:
        inner = value["kvlistValue"] if isinstance(value["kvlistValue"], dict) else {}
        return key_values(inner.get("values"))
    if "bytesValue" in value:
        return value["bytesValue"]  # base64 text, as it is
    return None


def key_values(items: Any) -> dict[str, Any]:
    """``[{key, value}]`` as a dict (a later key overwrites an earlier one)."""
    found: dict[str, Any] = {}
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            found[item["key"]] = any_value(item.get("value"))
    return found


def jaeger_tags(tags: Any) -> dict[str, Any]:
    """Jaeger's ``[{key, type, value}]`` as a dict."""
    found: dict[str, Any] = {}
    for tag in tags if isinstance(tags, list) else ():
        if not isinstance(tag, dict) or not isinstance(tag.get("key"), str):
            continue
        kind = str(tag.get("type") or "string").lower()
        value = tag.get("value")
        if kind in ("int64", "int"):
            value = to_int(value)
        elif kind in ("float64", "float") and isinstance(value, int | float | str):
            with contextlib.suppress(TypeError, ValueError):
                value = float(value)
        elif kind == "bool":
            value = value if isinstance(value, bool) else str(value).lower() == "true"
        found[tag["key"]] = value
    return found


def norm_kind(kind: Any) -> str:
    if isinstance(kind, int) and not isinstance(kind, bool):
        return _KINDS.get(kind, "UNSPECIFIED")
    text = str(kind or "")
    if text.isdigit():
        return _KINDS.get(int(text), "UNSPECIFIED")
    return text.upper().removeprefix("SPAN_KIND_") or "UNSPECIFIED"


def norm_status(status: Any) -> tuple[str, str]:
    status = status if isinstance(status, dict) else {}
    code = status.get("code", 0)
    if isinstance(code, int) and not isinstance(code, bool):
        name = _CODES.get(code, "UNSET")
    elif isinstance(code, str) and code.isdigit():
        name = _CODES.get(int(code), "UNSET")
    else:
        name = str(code or "").upper().removeprefix("STATUS_CODE_") or "UNSET"
    message = status.get("message")
    return name, message if isinstance(message, str) else ""


def dicts_of(value: Any) -> Iterable[dict[str, Any]]:
    """The objects of ``value`` if it is a list (anything else skipped)."""
    return (v for v in (value if isinstance(value, list) else ()) if isinstance(v, dict))


def _taken(value: Any) -> Iterator[dict[str, Any]]:
    """The dicts of a list, each let go of by the list once read: the parsed
    document shrinks as the normal form grows, so both are never whole at once."""
    if not isinstance(value, list):
        return
    for index in range(len(value)):
        item, value[index] = value[index], None
        if isinstance(item, dict):
            yield item


def scope_name(holder: dict[str, Any]) -> str:
    scope = holder.get("scope") or holder.get("instrumentationLibrary")
    name = scope.get("name") if isinstance(scope, dict) else None
    return name if isinstance(name, str) else ""


def log_of(lr: dict[str, Any], resource: dict[str, Any], scope: str, copy: int) -> Log:
    """An OTLP log record in the normal form."""
    attrs = key_values(lr.get("attributes"))
    name = lr.get("eventName") or attrs.get("event.name")
    times = _Times()
    return Log(
        trace_id=norm_id(lr.get("traceId")),
        span_id=norm_id(lr.get("spanId")),
        time_ns=times(lr, "timeUnixNano") or times(lr, "observedTimeUnixNano"),
        event_name=name if isinstance(name, str) and name else None,
        body=any_value(lr.get("body")),
        attributes=attrs,
        resource=resource,
        scope=scope,
        copy=copy,
        refused=times.refused,
    )


def span_of(sp: dict[str, Any], resource: dict[str, Any], scope: str, copy: int) -> Span:
    """An OTLP (or Tempo) span in the normal form."""
    code, message = norm_status(sp.get("status"))
    name = sp.get("name")
    times = _Times()
    return Span(
        trace_id=norm_id(sp.get("traceId")),
        span_id=norm_id(sp.get("spanId")),
        parent_id=norm_id(sp.get("parentSpanId")),
        name=name if isinstance(name, str) else "",
        kind=norm_kind(sp.get("kind")),
        start_ns=times(sp, "startTimeUnixNano"),
        end_ns=times(sp, "endTimeUnixNano"),
        attributes=key_values(sp.get("attributes")),
        resource=resource,
        scope=scope,
        status_code=code,
        status_message=message,
        events=[
            SpanEvent(
                str(e.get("name") or ""),
                times(e, "timeUnixNano"),
                key_values(e.get("attributes")),
            )
            for e in dicts_of(sp.get("events"))
        ],
        flags=to_int(sp.get("flags")),
        copy=copy,
        refused=times.refused,
    )


def span_head(sp: dict[str, Any]) -> tuple[str, str, str, int, int, list[int], bool]:
    """What ordering needs of a span, read as :func:`span_of` reads it, its
    attributes left unread: trace, span and parent ids, start, end, its
    events' times, and whether it is refused."""
    times = _Times()
    start, end = times(sp, "startTimeUnixNano"), times(sp, "endTimeUnixNano")
    events = [times(e, "timeUnixNano") for e in dicts_of(sp.get("events"))]
    return (
        norm_id(sp.get("traceId")),
        norm_id(sp.get("spanId")),
        norm_id(sp.get("parentSpanId")),
        start,
        end,
        events,
        bool(times.refused),
    )


def log_head(lr: dict[str, Any]) -> tuple[str, str, int, bool]:
    """What ordering needs of a log record, read as :func:`log_of` reads
    it: trace and span ids, time, and whether it is refused."""
    times = _Times()
    time_ns = times(lr, "timeUnixNano") or times(lr, "observedTimeUnixNano")
    return norm_id(lr.get("traceId")), norm_id(lr.get("spanId")), time_ns, bool(times.refused)


class Loader:
    """Spans and log records of one trace file, in the normal form, in file order."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.logs: list[Log] = []
        self._copies = 0

    def _next(self) -> int:
        self._copies += 1
        return self._copies

    def otlp(self, doc: dict[str, Any]) -> None:
        """An OTLP/JSON export request (spans, logs, or both)."""
        for rs in _taken(doc.get("resourceSpans")):
            self._resource_spans(rs)
        for rl in _taken(doc.get("resourceLogs")):
            resource = rl.get("resource")
            attrs = key_values(resource.get("attributes")) if isinstance(resource, dict) else {}
            for sl in dicts_of(rl.get("scopeLogs") or rl.get("instrumentationLibraryLogs")):
                scope = scope_name(sl)
                for lr in _taken(sl.get("logRecords")):
                    self._log(lr, attrs, scope)

    def _log(self, lr: dict[str, Any], resource: dict[str, Any], scope: str) -> None:
        self.logs.append(log_of(lr, resource, scope, self._next()))

    def _resource_spans(self, rs: dict[str, Any]) -> None:
        resource = rs.get("resource")
        attrs = key_values(resource.get("attributes")) if isinstance(resource, dict) else {}
        for ss in dicts_of(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")):
            scope = scope_name(ss)
            for sp in _taken(ss.get("spans")):
                self.spans.append(span_of(sp, attrs, scope, self._next()))

    def tempo(self, doc: dict[str, Any]) -> None:
        """A Grafana Tempo export: ResourceSpans in ``batches``."""
        for rs in _taken(doc.get("batches")):
            self._resource_spans(rs)

    def jaeger(self, doc: dict[str, Any]) -> None:
        """A Jaeger JSON export: traces in ``data``, each with its processes."""
        for trace in dicts_of(doc.get("data")):
            processes: dict[str, dict[str, Any]] = {}
            given = trace.get("processes")
            for pid, process in given.items() if isinstance(given, dict) else ():
                if isinstance(process, dict):
                    attrs = jaeger_tags(process.get("tags"))
                    attrs.setdefault("service.name", process.get("serviceName") or "")
                    processes[str(pid)] = attrs
            for sp in _taken(trace.get("spans")):
                self.spans.append(self._jaeger_span(sp, trace, processes))

    def _jaeger_span(
        self, sp: dict[str, Any], trace: dict[str, Any], processes: dict[str, dict[str, Any]]
    ) -> Span:
        tags = jaeger_tags(sp.get("tags"))
        parent = ""
        for ref in dicts_of(sp.get("references")):
            if (ref.get("refType") or "CHILD_OF") == "CHILD_OF":  # FOLLOWS_FROM is no parent
                parent = norm_id(ref.get("spanID"))
                break
        # the exporter folded OTLP's span fields into tags: taken back out
        scope = tags.pop("otel.scope.name", None) or tags.pop("otel.library.name", None) or ""
        tags.pop("otel.scope.version", None)
        tags.pop("otel.library.version", None)
        kind = norm_kind(tags.pop("span.kind", ""))
        code = str(tags.pop("otel.status_code", "") or "UNSET").upper()
        message = tags.pop("otel.status_description", "") or ""
        if tags.get("error") is True:
            tags.pop("error")
            code = "ERROR" if code == "UNSET" else code
        times = _Times()
        start = times(sp, "startTime", 1000)  # microseconds
        events = []
        for log in dicts_of(sp.get("logs")):
            fields = jaeger_tags(log.get("fields"))
            events.append(
                SpanEvent(str(fields.pop("event", "") or ""), times(log, "timestamp", 1000), fields)
            )
        end = start + to_int(sp.get("duration")) * 1000
        if not times.refused and end > MAX_TIME_NS:
            times.refused = f"startTime + duration is past a time OTLP can hold ({MAX_TIME_NS} ns)"
        name = sp.get("operationName")
        return Span(
            trace_id=norm_id(sp.get("traceID") or trace.get("traceID")),
            span_id=norm_id(sp.get("spanID")),
            parent_id=parent,
            name=name if isinstance(name, str) else "",
            kind=kind,
            start_ns=start,
            end_ns=end,
            attributes=tags,
            resource=processes.get(str(sp.get("processID")), {}),
            scope=str(scope),
            status_code=code,
            status_message=str(message),
            events=events,
            copy=self._next(),
            refused=times.refused,
        )


def break_loops(parent: dict[K, K | None], first: Callable[[K], Any]) -> list[K]:
    """Cut every loop of ``parent`` links (key -> its parent, None: a root) at
    the member ``first`` orders first (a span's start, then its place in the
    file), which becomes a root; the keys cut, in order."""
    cut: list[K] = []
    while True:
        loop = _loop(parent)
        if not loop:
            return cut
        root = min(loop, key=first)
        parent[root] = None
        cut.append(root)


def _loop(parent: dict[K, K | None]) -> list[K] | None:
    done: set[K] = set()
    for key in parent:
        path: list[K] = []
        walk: set[K] = set()
        at: K | None = key
        while at is not None and at not in done and at not in walk:
            walk.add(at)
            path.append(at)
            at = parent[at]
        if at is not None and at in walk:  # came back into this walk: a loop
            return path[path.index(at) :]
        done.update(path)
    return None


def shape_of(doc: Any) -> str | None:
    """Which shape a parsed JSON document is (None: not a trace)."""
    if not isinstance(doc, dict):
        return None
    if "resourceSpans" in doc or "resourceLogs" in doc:
        return OTLP
    if isinstance(doc.get("batches"), list):
        return TEMPO
    data = doc.get("data")
    if isinstance(data, list) and (not data or (isinstance(data[0], dict) and "spans" in data[0])):
        return JAEGER
    return None
