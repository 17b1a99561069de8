"""What a turn says: the user's words, the answer and the words between
(design.md §4.6), and the placeholders a recorder writes for a tool's
arguments and results when content is off."""

from __future__ import annotations

from replay_tui.reducers.otel_genai.messages import NOT_CAPTURED, Summary
from replay_tui.reducers.otel_genai.tools import Call, ToolCall


def answer_texts(
    calls: list[Call], a_in: Summary | None, a_out: Summary | None
) -> tuple[str | None, str | None, list[str]]:
    """user_text, final_text and intermediate_texts (design.md §4.6)."""
    own = [c for c in calls if not c.delegated] or calls
    if a_in is not None:
        user_text = a_in["user"] or a_in["text"]
    else:
        fc = next((c for c in calls if c.inp is not None), None)
        user_text = fc.inp["user"] if fc is not None and fc.inp is not None else None
    speaking = [c for c in own if c.out is not None and c.out["text"]]
    final_call = max(speaking, key=lambda c: (c.end, c.start)) if speaking else None
    inter: list[str]
    if a_out is not None:
        final_text = a_out["text"]
        inter = [c.out["text"] for c in speaking if c.out is not None]
        if inter and same_words(inter[-1], final_text):
            # the agent's answer is its last model call's words (Strands adds a
            # newline to it): one answer, in the model's own words
            final_text = inter.pop()
    else:
        final_text = final_call.out["text"] if final_call and final_call.out else None
        inter = [c.out["text"] for c in speaking if c is not final_call and c.out is not None]
    return user_text, final_text, inter


def not_captured(tools: list[ToolCall]) -> None:
    """In a turn whose model calls kept no words (content off), the ``{}``
    a recorder writes for a tool's arguments or result means "not
    captured" (null), not "no arguments"."""
    for tool in tools:
        if tool.args in NOT_CAPTURED:
            tool.args = None
        if tool.result in NOT_CAPTURED:
            tool.result = None


def same_words(a: str | None, b: str | None) -> bool:
    """Texts as a user reads them: whitespace at the ends makes no other answer."""
    return a is not None and b is not None and a.strip() == b.strip()
