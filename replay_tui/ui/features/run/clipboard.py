"""What ``y`` copies, without Textual: the state shown at the cursor, as
JSON, masked as on screen unless ``r`` revealed it, and what to say of it."""

from __future__ import annotations

from replay_tui.core.safe_text import mask_secrets
from replay_tui.state import canonical
from replay_tui.state.persistent import thaw
from replay_tui.views.runview import LineView


def state_to_copy(view: LineView | None, *, reveal: bool) -> tuple[str, str] | None:
    """(the JSON to copy, the notice saying what it is); None where no
    state was replayed (a pending row). At prefix 0 it is the initial state."""
    if view is None or view.mode not in ("step", "failed", "initial"):
        return None
    state = view.step.after if view.step is not None else view.state_before
    plain = thaw(state)
    shown = plain if reveal else mask_secrets(plain)
    data = canonical.dumps_pretty(shown).decode()
    if view.mode == "initial":
        where = "the initial state (prefix 0)"
    elif view.step is not None:
        where = (
            f"the state after seq {view.event.seq if view.event is not None else view.index + 1}"
        )
    else:
        seq = view.event.seq if view.event is not None else view.index + 1
        where = f"the state before the failing line {seq}"
    if reveal:
        secrets = ", secrets shown (r masks them)"
    elif shown != plain:
        secrets = ", secret-looking values masked as on screen (r reveals them)"
    else:
        secrets = ""
    return data, f"copied {where} as JSON ({len(data):,} bytes){secrets}"
