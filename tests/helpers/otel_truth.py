"""A trace's final state against its truth file (tests/fixtures/otel-traces/
NAME.truth.json): the comparison of the agentevals corpus's extract.py
compare(), one line for each difference."""

from __future__ import annotations

from typing import Any

from replay_tui.reducers.base import State
from replay_tui.reducers.otel_genai.messages import parse_json


def cmp_norm(value: Any) -> Any:
    """Results compare after JSON parsing and after unwrapping ADK's {"result": X}."""
    value = parse_json(value)
    if isinstance(value, dict) and set(value) == {"result"}:
        value = parse_json(value["result"])
    return value


def _compare_turn(i: int, tt: dict[str, Any], g: dict[str, Any]) -> list[str]:
    diffs = [
        f"turn {i} {f}: {g[f]!r} != {tt[f]!r}"
        for f in ("user_text", "final_text", "intermediate_texts")
        if tt[f] != g[f]
    ]
    if tt["tokens"] != {k: g["tokens"].get(k) for k in tt["tokens"]}:  # the counts it says
        diffs.append(f"turn {i} tokens: {g['tokens']!r} != {tt['tokens']!r}")
    if sorted(tt["agents"]) != sorted(g["agents"]):
        diffs.append(f"turn {i} agents: {g['agents']} != {tt['agents']}")
    if "llm_calls" in tt and tt["llm_calls"] != g["llm_calls"]:
        diffs.append(f"turn {i} llm_calls: {g['llm_calls']} != {tt['llm_calls']}")
    if len(tt["tool_calls"]) != len(g["tool_calls"]):
        diffs.append(f"turn {i} tool calls {len(g['tool_calls'])} != {len(tt['tool_calls'])}")
    for j, (tc, gc) in enumerate(zip(tt["tool_calls"], g["tool_calls"], strict=False)):
        for f in ("name", "is_error", "error_type"):
            if tc[f] != gc[f]:
                diffs.append(f"turn {i} tool {j} {f}: {gc[f]!r} != {tc[f]!r}")
        for f in ("args", "result"):
            if cmp_norm(tc[f]) != cmp_norm(gc[f]):
                diffs.append(f"turn {i} tool {j} {f}: {gc[f]!r} != {tc[f]!r}")
    return diffs


def compare(truth: dict[str, Any], got: State) -> list[str]:
    """What differs between the state ``got`` and ``truth``, a line each (none: the same)."""
    diffs: list[str] = []
    tturns, gturns = truth["turns"], got["turns"]
    if truth.get("extra_turns_allowed"):
        pairs = []
        for i, tt in enumerate(tturns):
            g = next((g for g in gturns if g["user_text"] == tt["user_text"]), None)
            if g is None:
                diffs.append(f"turn {i}: no turn with user_text {tt['user_text']!r}")
            else:
                pairs.append((i, tt, g))
    else:
        if len(tturns) != len(gturns):
            diffs.append(f"turn count {len(gturns)} != {len(tturns)}")
        pairs = [(i, tt, g) for i, (tt, g) in enumerate(zip(tturns, gturns, strict=False))]
    for i, tt, g in pairs:
        diffs += _compare_turn(i, tt, g)
    if truth["tokens"] != {k: got["tokens"].get(k) for k in truth["tokens"]}:
        diffs.append(f"tokens {got['tokens']} != {truth['tokens']}")
    if truth.get("content_captured", True) != got["content_captured"]:
        diffs.append(f"content_captured {got['content_captured']} != {truth['content_captured']}")
    if "session_key" in truth:
        key = got["session"]
        said = {"kind": key["kind"], "value": key["value"]} if key else None
        if truth["session_key"] != said:
            diffs.append(f"session_key {said} != {truth['session_key']}")
    return diffs
