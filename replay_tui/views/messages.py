"""One API message of a Claude Code session, across the lines it spans.

Claude Code writes one API message (one ``message.id``) as several
``assistant`` lines, a block each, and each line carries the message's
``usage`` as it stood when the line was written: it grows, or repeats. The
rules count a message once, with the usage of its last line so far
(:mod:`replay_tui.reducers.claude_code`); the inspector shows, at a line of a
message, which lines it spans, which line's usage counted after this prefix
and what the others said, so a count that differs from another tool's can be
checked line by line.

The lines of one message are written together, with at most the results of
its calls and other records between them: they are found by reading a few
lines either way, never the whole file.
"""

from __future__ import annotations

from typing import Any

from replay_tui.formats.envelope import Event

#: Lines read either way from the cursor's to find the rest of its message.
REACH = 64


def _message_id(event: Any) -> str | None:
    """The ``message.id`` of an ``assistant`` record, else None."""
    if not isinstance(event, Event):
        return None
    rec = event.fields
    if rec.get("type") != "assistant":
        return None
    msg = rec.get("message")
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else None


def _usage(event: Event) -> dict[str, Any] | None:
    msg = event.fields.get("message")
    usage = msg.get("usage") if isinstance(msg, dict) else None
    return usage if isinstance(usage, dict) else None


def message_lines(event_at: Any, index: int, lines: int) -> tuple[str, list[int]] | None:
    """(message id, the 0-based lines of its message) for line ``index``
    of a session of ``lines`` lines (``event_at(i)``: line i parsed); None
    if the line is not an API message's. Stops, either way, at an
    ``assistant`` line of another message or after :data:`REACH` lines."""
    mid = _message_id(event_at(index))
    if mid is None:
        return None
    found = [index]
    for step, stop in ((-1, max(-1, index - REACH - 1)), (1, min(lines, index + REACH + 1))):
        for i in range(index + step, stop, step):
            event = event_at(i)
            other = _message_id(event)
            if other == mid:
                found.append(i)
            elif other is not None:
                break  # the next (or previous) message has begun
    return mid, sorted(found)


def message_record(event_at: Any, index: int, lines: int, upto: int) -> tuple[str, Any] | None:
    """The inspector's record of the API message at line ``index`` after
    lines 1..``upto``: (title, ``{message, lines, counted, usage, left out,
    later}``); None if the line is not an API message's."""
    found = message_lines(event_at, index, lines)
    if found is None:
        return None
    mid, spans = found
    seen = [i for i in spans if i < upto]
    if not seen:
        return None
    counted = seen[-1]
    counted_event = event_at(counted)
    value: dict[str, Any] = {
        "message": mid,
        "lines": [i + 1 for i in spans],
        "counted": counted + 1,
        "usage": _usage(counted_event) if isinstance(counted_event, Event) else None,
        "left out": {
            str(i + 1): _usage(ev) for i in seen[:-1] if isinstance(ev := event_at(i), Event)
        },
    }
    later = [i + 1 for i in spans if i >= upto]
    if later:
        value["later"] = later
    words = "line" if len(spans) == 1 else "lines"
    title = f"API message {mid} · {len(spans)} {words} · the usage of line {counted + 1} counted"
    return title, value
