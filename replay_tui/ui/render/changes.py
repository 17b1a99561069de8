"""Change lines and the colours the panes share: ``+ path = new``,
``- path (was old)``, ``~ path: old → new``, as inert ``rich.text.Text``
(Rich only, no Textual)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from replay_tui.core.safe_text import MASK, escape_controls, is_secret_key, mask_secrets
from replay_tui.state.diff import Change, path_str
from replay_tui.ui.render.json_text import scalar_text
from replay_tui.views.runview import LineView

ADDED = "bold #a6d189"
REMOVED = "bold #e78284"
CHANGED = "bold #e5c890"
HEAD = "bold"
DIM = "dim"
ERROR = "bold #e78284"
OK = "bold #a6d189"
WARN = "bold #e5c890"

#: How much of a long value is shown before it is cut (``x`` expands).
CLIP_SHORT = 160
CLIP_LONG = 20_000


def _value(value: Any, key: str | int | None, reveal: bool, limit: int) -> Text:
    if isinstance(key, str) and is_secret_key(key) and value is not None and not reveal:
        return Text(MASK, style="reverse #e78284")
    return scalar_text(value if reveal else mask_secrets(value), limit)


def change_lines(changes: list[Change], *, reveal: bool, limit: int) -> list[Text]:
    """``+ path = new``, ``- path (was old)``, ``~ path: old -> new``."""
    out: list[Text] = []
    for c in changes:
        key = c.path[-1] if c.path else None
        where = escape_controls(path_str(c.path))
        if c.op == "added":
            out.append(
                Text.assemble(
                    ("+ ", ADDED), (where, ADDED), " = ", _value(c.new, key, reveal, limit)
                )
            )
        elif c.op == "removed":
            out.append(
                Text.assemble(
                    ("- ", REMOVED),
                    (where, REMOVED),
                    " (was ",
                    _value(c.old, key, reveal, limit),
                    ")",
                )
            )
        else:
            out.append(
                Text.assemble(
                    ("~ ", CHANGED),
                    (where, CHANGED),
                    ": ",
                    _value(c.old, key, reveal, limit),
                    " → ",
                    _value(c.new, key, reveal, limit),
                )
            )
    return out


def event_json(view: LineView) -> Any:
    return view.event.fields if view.event is not None else None
