"""What ``usage`` says it counted and left out, in words: per source (Claude
Code, Codex, Gemini CLI), the tally of a group of sessions as lines a person
reads under the table (:func:`audit_lines`), and token counts in words
(:func:`amounts`)."""

from __future__ import annotations

from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.formats.sessions import CODEX, GEMINI
from replay_tui.questions.usage import FIELDS, Tally

#: Fields in words, for the audit.
WORDS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_creation_input_tokens": "cache creation",
    "cache_read_input_tokens": "cache read",
    "cached_input_tokens": "cached input",
    "reasoning_output_tokens": "reasoning output",
    "total_tokens": "total",
    "input": "input",
    "cached": "cached",
    "output": "output",
    "thoughts": "thought",
    "tool": "tool-use prompt",
    "total": "total",
}


def _some(paths: list[str], shown: int = 3) -> str:
    """Up to ``shown`` paths, and how many more."""
    said = ", ".join(escape_controls(p) for p in paths[:shown])
    return said + (f" and {len(paths) - shown:,} more" if len(paths) > shown else "")


def amounts(vector: list[int], source: str) -> str:
    """``1,204 output and 27,356 cache creation tokens`` (the fields not 0)."""
    said = [f"{n:,} {WORDS[f]}" for f, n in zip(FIELDS[source], vector, strict=True) if n]
    if not said:
        return "no tokens"
    head = ", ".join(said[:-1])
    if head:
        return f"{head} and {said[-1]} tokens"
    return f"{said[0]} token" if sum(vector) == 1 else f"{said[0]} tokens"


def audit_lines(tally: Tally, source: str, by: str = "session") -> list[str]:
    """What was counted, and what was left out and why, in words."""
    if source == GEMINI:
        lines = _gemini_lines(tally)
    else:
        lines = _codex_lines(tally) if source == CODEX else _claude_code_lines(tally)
    for model in sorted(tally.unpriced):
        lines.append(f"no price for `{escape_controls(model)}`: its tokens are not in the cost")
    if tally.subagents:
        whose = "this session" if by == "session" else "their sessions"
        lines.append(
            f"{plural(len(tally.subagents), 'sub-agent transcript')} counted with {whose}: "
            f"{amounts(tally.subagent_tokens, source)}"
        )
    if tally.unreadable:
        lines.append(f"{plural(tally.unreadable, 'line')} not a JSON object: left out")
    return lines


def _claude_code_lines(t: Tally) -> list[str]:
    lines = [
        f"{plural(t.counted, 'API message', sep=True)} counted, each once, with the usage of "
        f"its last line ({plural(t.lines, 'line', sep=True)} with usage read)"
    ]
    if t.streamed_lines:
        lines.append(
            f"{plural(t.streamed_lines, 'streamed line', sep=True)} of "
            f"{plural(t.streamed_messages, 'message', sep=True)} left out (their usage repeats, "
            f"or is part of, the last line's): "
            f"{amounts(t.per_line_adds, 'claude-code')} a per-line sum would add"
        )
        if any(t.first_line_misses):
            lines.append(
                "a count that kept each message's first line instead would miss "
                f"{amounts(t.first_line_misses, 'claude-code')}"
            )
    if t.no_request_id:
        n = t.no_request_id
        lines.append(
            f"{n:,} of these messages {'has' if n == 1 else 'have'} no requestId (Bedrock and "
            "other gateways write none): grouped by message.id all the same"
        )
    if t.sidechain_messages:
        lines.append(
            f"{plural(t.sidechain_messages, 'API message', sep=True)} of sub-agents written in "
            f"the session's own file (isSidechain): {amounts(t.sidechain_tokens, 'claude-code')}, "
            "counted with it"
        )
    if t.elsewhere_messages:
        files = _some(sorted(t.elsewhere_in))
        lines.append(
            f"{plural(t.elsewhere_messages, 'API message', sep=True)} also in a file read "
            f"before ({files}), the same message.id: counted in each file "
            f"({amounts(t.elsewhere_tokens, 'claude-code')} here)"
        )
    return lines


def _codex_lines(t: Tally) -> list[str]:
    lines = [
        f"{plural(t.counted, 'token_count event', sep=True)} with a new total_token_usage: "
        "the usage is the last total (each event's increase over the one before goes to its "
        "day and model)"
    ]
    if t.repeated:
        lines.append(
            f"{plural(t.repeated, 'token_count event', sep=True)} repeating the one before "
            "(the same total_token_usage, recorded twice) left out: a sum of last_token_usage "
            f"over every event would add {amounts(t.per_line_adds, CODEX)}"
        )
    if t.no_usage:
        lines.append(
            f"{plural(t.no_usage, 'token_count event', sep=True)} without usage (info: null, "
            "rate limits only): nothing to count"
        )
    if t.per_event_sum != t.tokens:
        lines.append(
            f"the sum of last_token_usage over the events counted is "
            f"{amounts(t.per_event_sum, CODEX)}: not the total; the total is what Codex "
            "recorded, and is what is counted"
        )
    return lines


def _gemini_lines(t: Tally) -> list[str]:
    lines = [
        f"{plural(t.counted, 'response', sep=True)} counted, each once, with the tokens of its "
        f"last copy ({plural(t.lines, 'line', sep=True)} with tokens read); a response a rewind, "
        "a compression or a resume later dropped from the conversation was spent: it counts"
    ]
    if t.streamed_lines:
        lines.append(
            f"{plural(t.streamed_lines, 'earlier copy', 'earlier copies', sep=True)} of "
            f"{plural(t.streamed_messages, 'response', sep=True)} left out (Gemini CLI writes a "
            f"response again as it changes): {amounts(t.per_line_adds, GEMINI)} a per-line sum "
            "would add"
        )
    return lines
