"""Numbers on the command line, checked as they are parsed: a bad value is
one line and exit 2 (argparse's error, which ``cli.options.Parser`` makes one)."""

from __future__ import annotations

import argparse
import difflib
import math

from replay_tui.core.errors import ERROR_CODES, KNOWN_CODES, WARNING_CODES


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None


def positive_int(text: str) -> int:
    """``--jobs N``: 1 or more."""
    n = _whole(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: give 1 or more")
    return n


def seq_or_zero(text: str) -> int:
    """``--at SEQ``: a seq, or 0 for the initial state."""
    n = _whole(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n}: seqs are 0 (the initial state) and up")
    return n


def event_seq(text: str) -> int:
    """``--skip SEQ``: an event's seq, 1 or more."""
    n = _whole(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: events are numbered from 1")
    return n


def seconds(text: str) -> float:
    """``--rules-timeout S``: seconds, 0 or more (0: wait forever)."""
    try:
        s = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not math.isfinite(s) or s < 0:
        raise argparse.ArgumentTypeError(f"{text}: give 0 or more seconds (0: wait forever)")
    return s


def port_number(text: str) -> int:
    """``--port N``: a TCP port, 1 to 65535."""
    n = _whole(text)
    if not 1 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"{n}: ports are 1 to 65535")
    return n


def port_or_any(text: str) -> int:
    """``receive --port N``: a TCP port, 1 to 65535, or 0 for any free one."""
    n = _whole(text)
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"{n}: ports are 1 to 65535 (0: any free one)")
    return n


#: ``--max-bytes``' units: KiB, MiB, GiB.
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def byte_count(text: str) -> int:
    """``--max-bytes N``: bytes, 1 or more; ``32M`` is 32 MiB (K, M, G)."""
    number, unit = text.strip(), ""
    if number[-1:].lower() in _UNITS:
        number, unit = number[:-1], number[-1].lower()
    n = _whole(number) * _UNITS[unit] if number.isdigit() else 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give bytes, 1 or more (or with K, M, G)")
    return n


#: ``--fail-on any``: every warning.
ANY_CODE = "any"


def finding_code(text: str) -> str:
    """``--fail-on CODE``: a code the engine or a source can report, or
    ``any``. An unknown word is refused (a typo would pass silently in CI),
    naming the closest known code and listing them all."""
    if text == ANY_CODE or text in KNOWN_CODES:
        return text
    words = (*KNOWN_CODES, ANY_CODE)
    spelled = text.strip().lower().replace("-", "_").replace(" ", "_")
    close = [spelled] if spelled in words else difflib.get_close_matches(spelled, words, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise argparse.ArgumentTypeError(
        f"unknown code {text!r}: {hint}known codes: warnings {', '.join(WARNING_CODES)}; "
        f"errors {', '.join(ERROR_CODES)}; or {ANY_CODE}"
    )
