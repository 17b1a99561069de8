"""Numbers on the command line, checked as they are parsed: a bad value is
one line and exit 2 (argparse's error, which ``cli.options.Parser`` makes one)."""

from __future__ import annotations

import argparse
import math


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
