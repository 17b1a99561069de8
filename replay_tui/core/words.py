"""Counts in words: ``1 event``, ``2 events``."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None, *, sep: bool = False) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1 (``many``, else ``word + "s"``);
    ``sep``: thousands separated (``1,000 events``)."""
    number = f"{n:,}" if sep else str(n)
    return f"{number} {word if n == 1 else (many or word + 's')}"


def byte_size(n: int) -> str:
    """A size for people: ``999 B``, ``12.3 KiB``, ``4.0 MiB``, ``2.1 GiB``."""
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    for unit in ("KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
