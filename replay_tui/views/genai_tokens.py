"""A model span's tokens, for its row in a trace's timeline: what the span
says (its ``gen_ai.usage.*`` attributes, old names too), else its inference
details event or log, else ADK's ``usage_metadata``: the order the
``otel_genai`` rules take them in. Read from a span's own records (the few
its row is worded from), never from the state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from replay_tui.formats.envelope import Event, LineError
from replay_tui.reducers.otel_genai.messages import DETAILS, adk_usage, overlay, usage_of

#: Where a record's tokens rank: the span's attributes, its details, ADK's.
_SPAN, _DETAILS, _ADK = 0, 1, 2


def _said(event: Event) -> tuple[int, list[int]] | None:
    p = event.payload
    attrs = p.get("attributes")
    if not isinstance(attrs, Mapping):
        return None
    if event.kind == "span_start":
        found = usage_of(overlay(attrs))
        if found is not None:
            return _SPAN, found
        adk = adk_usage(attrs)
        return None if adk is None else (_ADK, adk)
    if event.kind in ("span_event", "log") and p.get("name", p.get("event_name")) == DETAILS:
        found = usage_of(overlay(attrs))
        if found is None and isinstance(p.get("body"), Mapping):
            found = usage_of(overlay(p["body"]))
        return None if found is None else (_DETAILS, found)
    return None


def span_tokens(events: Iterable[Event | LineError | None]) -> tuple[int, int] | None:
    """``(input, output)`` tokens of the span whose records are ``events``
    (None: none of them says any)."""
    best: tuple[int, list[int]] | None = None
    for event in events:
        said = _said(event) if isinstance(event, Event) else None
        if said is not None and (best is None or said[0] < best[0]):
            best = said
    return None if best is None else (best[1][0], best[1][1])
