"""The ``cost`` in a rules' state, kept as calls are counted.

``cost``:

- ``total``: USD, the sum of every priced call (each rounded to the
  micro-dollar), a float with at most six decimals;
- ``partial``: true when some call's model has no known price: its tokens
  are in no total (they are not free, only unpriced);
- ``by_model``: model -> ``{usd, priced_as}`` (``priced_as``: the
  database's ``provider/model`` or the user's ``file: PATTERN``);
- ``unpriced``: the models with tokens and no price, in order of first use;
- ``turns``: ``[{turn, usd}]``, what each turn (prompt of the user) cost,
  turn 0 being what came before the first prompt (rules with turns).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from replay_tui.reducers.pricing.book import Tokens, active

#: How a call with no model name is listed among the unpriced.
NO_MODEL = "(no model named)"


def cost_state(turns: bool = True) -> dict[str, Any]:
    state: dict[str, Any] = {"total": 0.0, "partial": False, "by_model": {}, "unpriced": []}
    if turns:
        state["turns"] = []
    return state


def micro(cost: Decimal) -> int:
    """``cost`` USD in whole micro-dollars (half to even)."""
    # (not ``quantize``: it raises past the context's 28 digits, and a
    # trace may count more tokens than that)
    return int(cost.scaleb(6).to_integral_value(rounding=ROUND_HALF_EVEN))


def usd(micros: int) -> float:
    """Micro-dollars as the state's float (the nearest to the exact decimal)."""
    return micros / 1_000_000


def _micros(value: float) -> int:
    return round(value * 1_000_000)


def price(model: str | None, provider: str | None, tokens: Tokens, at: float | None) -> int | None:
    """One call's cost in micro-dollars; None when its model has no price."""
    found = active().cost(model, provider, tokens, at)
    return None if found is None else micro(found)


def charge(
    cost: dict[str, Any], model: str, provider: str | None, delta: int, turn: int | None
) -> None:
    """Add ``delta`` micro-dollars spent on ``model`` (in ``turn``) to ``cost``."""
    if delta == 0:
        return
    row = cost["by_model"].get(model)
    if row is None:
        where = active().where(model, provider)
        cost["by_model"][model] = {"usd": usd(delta), "priced_as": where}
    else:
        row["usd"] = usd(_micros(row["usd"]) + delta)
    cost["total"] = usd(_micros(cost["total"]) + delta)
    if turn is not None and "turns" in cost:
        turns = cost["turns"]
        if turns and turns[-1]["turn"] == turn:
            turns[-1]["usd"] = usd(_micros(turns[-1]["usd"]) + delta)
        else:
            turns.append({"turn": turn, "usd": usd(delta)})


def unpriced(cost: dict[str, Any], model: str | None) -> None:
    """Name ``model`` among those with tokens and no price."""
    name = model or NO_MODEL
    if name not in cost["unpriced"]:
        cost["unpriced"].append(name)
    if not cost["partial"]:
        cost["partial"] = True


def add_call(
    cost: dict[str, Any],
    model: str | None,
    provider: str | None,
    tokens: Tokens,
    at: float | None,
    turn: int | None = None,
) -> int | None:
    """Count one call; its micro-dollars, or None when unpriced."""
    if not tokens.any():
        return 0
    micros = price(model, provider, tokens, at)
    if micros is None or model is None:
        unpriced(cost, model)
        return None
    charge(cost, model, provider, micros, turn)
    return micros


def set_message(
    cost: dict[str, Any],
    model: str | None,
    provider: str | None,
    tokens: Tokens,
    at: float | None,
    before: int | None,
    turn: int | None,
) -> int | None:
    """A message whose usage grows line by line (Claude Code): price its
    usage now, charge what it adds to ``before`` (the micro-dollars it was
    charged so far, None for a new message), return the new price (None:
    unpriced)."""
    if not tokens.any():
        return before
    micros = price(model, provider, tokens, at)
    if micros is None or model is None:
        unpriced(cost, model)
        return None
    charge(cost, model, provider, micros - (before or 0), turn)
    return micros


def money(value: float) -> str:
    """``$1,234.56``, ``$0.0123``, ``$0.000034``: dollars as people read
    them (cents, four decimals under a dollar, and under a hundredth of a
    cent two significant digits: a call that cost little never reads $0.0000)."""
    if abs(value) >= 1:
        return f"${value:,.2f}"
    if value == 0 or abs(value) >= 0.0001:
        return f"${value:.4f}"
    rounded = float(f"{value:.2g}")  # 0.0000999 is 0.00010
    digits = 1 - math.floor(math.log10(abs(rounded)))
    return f"${rounded:.{digits}f}"


def cost_words(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What one record changed of the cost, for a row's explanation:
    ``; cost $0.0123 -> $0.0456``, ``; no price for `gpt-x```."""
    words = ""
    if before["total"] != after["total"]:
        words += f"; cost {money(before['total'])} -> {money(after['total'])}"
    for model in after["unpriced"][len(before["unpriced"]) :]:
        words += f"; no price for `{model}`: its tokens are not in the cost"
    return words


@dataclass(frozen=True)
class Spent:
    """What a group of calls (a trace's turn) cost: micro-dollars by model
    and the models left unpriced."""

    by_model: tuple[tuple[str, int], ...] = ()
    unpriced: tuple[str, ...] = ()
    where: tuple[tuple[str, str | None], ...] = ()

    def public(self) -> dict[str, Any]:
        """As a turn of the state shows it: ``{usd, unpriced}``."""
        return {"usd": usd(sum(m for _, m in self.by_model)), "unpriced": list(self.unpriced)}


Priceable = tuple[str | None, str | None, Tokens, float | None]


def spent(calls: Iterable[Priceable]) -> Spent:
    """Price calls given as (model, provider, tokens, time)."""
    micros: dict[str, int] = {}
    where: dict[str, str | None] = {}
    missing: list[str] = []
    for model, provider, tokens, at in calls:
        if not tokens.any():
            continue
        found = price(model, provider, tokens, at)
        if found is None or model is None:
            name = model or NO_MODEL
            if name not in missing:
                missing.append(name)
            continue
        micros[model] = micros.get(model, 0) + found
        if model not in where:
            where[model] = active().where(model, provider)
    return Spent(tuple(micros.items()), tuple(missing), tuple(where.items()))


@dataclass
class Running:
    """Totals of :class:`Spent` added and taken away (turns replaced as a
    trace grows), shown as a ``cost`` state (without ``turns``)."""

    micros: dict[str, int] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)
    where: dict[str, str | None] = field(default_factory=dict)

    def add(self, part: Spent, sign: int) -> None:
        for model, m in part.by_model:
            left = self.micros.get(model, 0) + sign * m
            if left or sign > 0:
                self.micros[model] = left
            else:
                del self.micros[model]
        for model, place in part.where:
            self.where.setdefault(model, place)
        for name in part.unpriced:
            count = self.missing.get(name, 0) + sign
            if count > 0:
                self.missing[name] = count
            else:
                self.missing.pop(name, None)

    def state(self) -> dict[str, Any]:
        return {
            "total": usd(sum(self.micros.values())),
            "partial": bool(self.missing),
            "by_model": {
                m: {"usd": usd(n), "priced_as": self.where.get(m)}
                for m, n in sorted(self.micros.items())
            },
            "unpriced": sorted(self.missing),
        }
