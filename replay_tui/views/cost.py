"""What the calls cost up to a prefix, in a few words (the status line, the
report): from the ``cost`` of the state, where the rules keep one (see
:mod:`replay_tui.reducers.pricing`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay_tui.reducers.pricing import money


def cost_words(state: Any) -> str | None:
    """``cost $1.23`` (``+?``: partial, some model has no price), or None
    where the state keeps no cost or no call used tokens yet."""
    cost = state.get("cost") if isinstance(state, Mapping) else None
    if not isinstance(cost, Mapping):
        return None
    total = cost.get("total")
    if not isinstance(total, int | float) or isinstance(total, bool):
        return None
    if not cost.get("by_model") and not cost.get("unpriced"):
        return None  # no tokens yet: nothing to say
    return f"cost {money(total)}" + ("+?" if cost.get("partial") is True else "")


def unpriced_words(state: Any) -> str | None:
    """``no price for `x`, `y```: the models whose tokens the cost leaves out."""
    cost = state.get("cost") if isinstance(state, Mapping) else None
    models = cost.get("unpriced") if isinstance(cost, Mapping) else None
    if not models:
        return None
    return "no price for " + ", ".join(f"`{m}`" for m in models)
