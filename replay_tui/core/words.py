"""Counts in words: ``1 event``, ``2 events``."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None, *, sep: bool = False) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1 (``many``, else ``word + "s"``);
    ``sep``: thousands separated (``1,000 events``)."""
    number = f"{n:,}" if sep else str(n)
    return f"{number} {word if n == 1 else (many or word + 's')}"
