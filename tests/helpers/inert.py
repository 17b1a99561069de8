"""Text that reaches a terminal is inert: no traceback, no raw control character."""

from __future__ import annotations

#: Bytes that must never reach a terminal raw (C0 but newline, DEL, C1, bidi).
RAW_CONTROLS = [chr(c) for c in range(32) if c != 10] + ["\x7f", "\x9b", "\u202e", "\u2066"]


def assert_inert(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text
    for ch in RAW_CONTROLS:
        assert ch not in text, f"raw {ch!r} in output"
