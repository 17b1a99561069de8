"""What the calls of a session or trace cost, as state.

Prices come from Pydantic's ``genai-prices`` (its data ships inside the
package: it is never updated over the network here), by provider and model,
with cache-read and cache-write rates, tiers and dated changes: a call is
priced as at its own time. A user's price file (``--prices FILE``, see
:mod:`.book`) comes first for the models it names.

The rules that count tokens (``claude_code``, ``codex``, ``otel_genai``)
keep a ``cost`` in their state through :mod:`.tally`: the total, per model,
per turn, and the models with no known price (``unpriced``), which make
the total ``partial`` rather than count as free. Amounts are US dollars,
each call's cost rounded to the micro-dollar (half-even) and summed as
integers, shown in the state as a float with at most six decimals.
"""

from __future__ import annotations

from replay_tui.reducers.pricing.book import PriceBook, Tokens, active, load_price_file, use
from replay_tui.reducers.pricing.tally import (
    Running,
    Spent,
    add_call,
    cost_state,
    cost_words,
    micro,
    money,
    price,
    set_message,
    spent,
    usd,
)

__all__ = [
    "PriceBook",
    "Running",
    "Spent",
    "Tokens",
    "active",
    "add_call",
    "cost_state",
    "cost_words",
    "load_price_file",
    "micro",
    "money",
    "price",
    "set_message",
    "spent",
    "usd",
    "use",
]
