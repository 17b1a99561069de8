"""Links to a seq of a run: ``RUN@SEQ``, as the app opens them and its ``c``
copies them. One parser for every command that takes a run: a path that
exists as given is a path, even with an ``@`` in it."""

from __future__ import annotations

import os
from pathlib import Path

from replay_tui.core.errors import CannotRun


def link_to(run: Path, seq: int) -> str:
    """The link to ``seq`` of ``run``: its absolute path (symbolic links
    kept as named, ``..`` folded), ``@``, the seq."""
    return f"{os.path.abspath(run)}@{seq}"


def split_link(run: str | None) -> tuple[str | None, int | None]:
    """``RUN@SEQ`` as (RUN, SEQ). A path that exists as given is a path,
    even with an ``@`` in it."""
    if run is None or Path(run).exists():
        return run, None
    head, at, tail = run.rpartition("@")
    if at and head and tail.isdigit():
        return head, int(tail)
    if at and head and Path(head).exists():
        raise CannotRun(
            f"{run}: {tail!r} after @ is not a seq; a link is RUN@SEQ, "
            f"SEQ a whole number (0: the initial state), e.g. {head}@10"
        )
    return run, None


def run_and_seq(run: str, at: int | None, option: str = "--at") -> tuple[str, int | None]:
    """RUN (or ``RUN@SEQ``) and an ``--at``: the run and the one seq they
    name; a link and ``--at`` that disagree are an error."""
    path, seq = split_link(run)
    assert path is not None
    if at is not None:
        if seq is not None and seq != at:
            raise CannotRun(f"{run} and {option} {at} name two seqs: give one")
        seq = at
    return path, seq


def whole_run(run: str, command: str, why: str) -> str:
    """RUN for a command where a seq means nothing: ``RUN@SEQ`` is refused,
    saying why and what to do instead."""
    path, seq = split_link(run)
    assert path is not None
    if seq is not None:
        raise CannotRun(f"{run}: {command} {why}: drop the @{seq}")
    return path
