"""Which model call a log with no span id belongs to, and the logs that
belong to none for sure (``unattributed``): those are listed in the state,
never merged into a turn."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from replay_tui.reducers.otel_genai.spans import INFERENCE, classify, pick_call
from replay_tui.reducers.otel_genai.words import fact_words


def route_traceless(
    store: Mapping[str, Any],
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Logs with no trace id: to the trace holding the span they name, else
    to the only model call of the file, else to the one whose time range
    holds them (:func:`pick_call`); and those that could be either of two
    calls, or none (unattributed)."""
    routed: dict[str, list[dict[str, Any]]] = {}
    loose: list[dict[str, Any]] = []
    traces = sorted(store)
    where: dict[str, str] = {}
    cands: list[tuple[str, int, int]] = []
    for t in traces:
        for sid, e in store[t]["spans"].items():
            fact = e["fact"]
            if fact is not None and classify(fact) == INFERENCE:
                where[sid] = t
                cands.append((sid, fact["start"], fact["end"]))
    for lg in store[""]["logs"]:
        if lg["span"]:
            tid = next((t for t in traces if lg["span"] in store[t]["spans"]), None)
            if tid is not None:
                routed.setdefault(tid, []).append(lg)
            continue
        sid = pick_call(cands, lg["time"])
        if sid is None:
            loose.append(lg)
        else:
            routed.setdefault(where[sid], []).append({**lg, "to": sid})
    return routed, loose


def unattributed(
    per_trace: Iterable[list[dict[str, Any]]], loose: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The logs no model call can claim alone, in time order: where each
    is (``seq``), its name and what it says. Never merged into a turn."""
    logs = [lg for found in per_trace for lg in found] + loose
    logs.sort(key=lambda lg: (lg["time"], lg["copy"]))  # whatever order they came in
    return [
        {"seq": lg.get("seq"), "name": lg["name"], "says": fact_words(lg), "why": _why(lg)}
        for lg in logs
    ]


def _why(log: Mapping[str, Any]) -> str:
    if log["span"]:
        return f"span {log['span']} is not in the trace, and no one model call can claim it"
    return "no span id, and no one model call can claim it (it could be either of two, or none)"
