"""A folded call's row, in words: what it ran, how it ended, how long, what it cost."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.views.calls import CallRow

STATUS_STYLES = {
    "ok": Style(color="#a6d189", bold=True),
    "error": Style(color="#e78284", bold=True),
    "denied": Style(color="#ef9f76", bold=True),
    "open": Style(color="#e5c890", italic=True),
}
#: Characters of a call's argument shown in its row.
ARG_SHOWN = 40


def _seconds(value: float) -> str:
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    return f"{value / 60:.1f} min"


def call_row_text(call: CallRow, style: Style, *, name: bool = True, arg: bool = True) -> Text:
    """``ok  tests/test_parser.py  273 ms · cost 0.002 · 4 events`` (data as
    text; a model span's tokens first: ``10 in/8 out · 27 ms · ...``), the
    argument unless something else shows it (``arg``: a span tree's label),
    and the call's name when no column shows it (``name``)."""
    text = Text(no_wrap=True, end="")
    status = "still open" if call.status == "open" else call.status
    text.append(status, style=STATUS_STYLES.get(call.status))
    if arg and call.arg:
        said = escape_controls(call.arg)
        said = said if len(said) <= ARG_SHOWN else said[: ARG_SHOWN - 1] + "…"
        text.append("  " + said, style=style + Style(bold=True))
    parts = []
    if call.tokens is not None:  # first: the row's width may end before the rest
        parts.append(f"{call.tokens[0]:,} in/{call.tokens[1]:,} out")
    if call.duration is not None:
        parts.append(_seconds(max(call.duration, 0.0)))
    if call.cost is not None:
        parts.append(f"cost {call.cost:g}")
    parts.append(plural(call.count, "event"))
    if call.first_seq is not None and call.last_seq is not None and call.count > 1:
        parts.append(f"seq {call.first_seq}–{call.last_seq}")
    text.append("  " + " · ".join(parts), style=style)
    if name and call.name and call.name != call.tool:
        text.append("  " + escape_controls(call.name), style=Style(dim=True))
    return text
