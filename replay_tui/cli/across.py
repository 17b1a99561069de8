"""``replay-tui when`` and ``replay-tui history``: questions across time, from
the shell.

Both run one strict forward pass (``check``'s engine, JSON checkpoints, plain
states) with a watcher on it (see :mod:`replay_tui.questions.across`): the cost is that
of ``check`` plus a few lookups an event. ``when`` without ``--all`` stops at
the first answer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import escape_controls
from replay_tui.engine.open import open_replay
from replay_tui.formats.envelope import Event
from replay_tui.questions.across import (
    HistorySearch,
    PathChange,
    TooBigToWatch,
    Turn,
    WhenSearch,
    shown_value,
)
from replay_tui.questions.condition import (
    ABSENT,
    ConditionError,
    format_path,
    parse_condition,
    parse_path,
)

if TYPE_CHECKING:
    import argparse

    from replay_tui.engine.replay import Replay

#: Longest value shown in human output (``--json`` has them whole).
SHOWN = 80


def _shown(value: Any) -> str:
    return shown_value(value, SHOWN)


def _kind(replay: Replay, seq: int) -> str | None:
    if seq < 1:
        return None
    event = replay.event(seq - 1)
    return event.kind if isinstance(event, Event) else None


def _searched_note(replay: Replay) -> str | None:
    """Why only a prefix was searched, when strict replay stopped early."""
    if replay.error is None:
        return None
    return (
        f"searched the valid prefix only (events 1..{replay.valid}): strict replay stopped "
        f"{replay.error.one_line()}"
    )


def _err(text: str) -> None:
    sys.stderr.write(f"replay-tui: {escape_controls(text)}\n")


def _out(text: str) -> None:
    sys.stdout.write(escape_controls(text) + "\n")


def _out_lines(lines: Iterable[str]) -> None:
    """Many lines for people, escaped, written in blocks."""
    block: list[str] = []
    for line in lines:
        block.append(escape_controls(line))
        if len(block) >= 4096:
            sys.stdout.write("\n".join(block) + "\n")
            block = []
    if block:
        sys.stdout.write("\n".join(block) + "\n")


def _watch(
    args: argparse.Namespace,
    search: WhenSearch | HistorySearch,
    stop: Callable[[], bool],
) -> tuple[Replay, Any]:
    """Run the forward pass with ``search`` watching it. A watched object too
    big to compare after every event: run it again keeping the patch log
    (the app's engine), and ask that."""
    from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET

    replay, dog = open_replay(
        args.run,
        args.reducer,
        timeout=args.rules_timeout,
        fmt=args.format,
        checkpoint_budget=CHECK_CHECKPOINT_BUDGET,
    )
    try:
        try:
            search.start(replay.state_at(0))
            if not stop():
                replay.observer = search.see
                replay.advance(cancelled=stop)
                if not stop():
                    replay.finish()
        except TooBigToWatch:
            if dog is not None:
                dog.stop()
            replay.close()
            replay, dog = open_replay(
                args.run, args.reducer, timeout=args.rules_timeout, fmt=args.format, history=True
            )
            replay.verify()
            search.from_replay(replay)
    except BaseException:
        if dog is not None:
            dog.stop()
        replay.close()
        raise
    return replay, dog


def _move_text(path: Any, need: str, old: Any, new: Any) -> str:
    if need == "exists":
        words = {True: "present"}
        return f"{format_path(path)}: {words.get(old, 'absent')} → {words.get(new, 'absent')}"
    label = f"len({format_path(path)})" if need == "len" else format_path(path)
    return f"{label}: {_shown(old)} → {_shown(new)}"


def _turn_json(turn: Turn, kind: str | None, needs: dict[Any, str]) -> dict[str, Any]:
    changes = []
    for path, old, new in turn.moves:
        item: dict[str, Any] = {"path": list(path), "watched": needs[path]}
        if old is not ABSENT:
            item["old"] = old
        if new is not ABSENT:
            item["new"] = new
        changes.append(item)
    return {"seq": turn.seq, "kind": kind, "changes": changes}


def cmd_when(args: argparse.Namespace) -> int:
    try:
        condition = parse_condition(args.condition)
    except ConditionError as exc:
        raise CannotRun(exc.one_line()) from None
    search = WhenSearch(condition, every=args.all)
    replay, dog = _watch(args, search, lambda: search.done)
    try:
        needs = search.watcher.needs
        note = None if search.done else _searched_note(replay)
        if args.json:
            out = {
                "condition": args.condition,
                "seqs": [t.seq for t in search.turns],
                "turns": [
                    _turn_json(t, t.kind or _kind(replay, t.seq), needs) for t in search.turns
                ],
                "searched": replay.valid,
                "complete": replay.error is None or search.done,
                "error": replay.error.to_json() if replay.error and not search.done else None,
            }
            sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
        else:
            for turn in search.turns:
                kind = turn.kind or _kind(replay, turn.seq) or "(initial state)"
                moves = "; ".join(_move_text(p, needs[p], o, n) for p, o, n in turn.moves)
                _out(f"{turn.seq}  {kind}  {moves}".rstrip())
        if note:
            _err(note)
        if not search.turns:
            if not args.json:
                _err(f"never: {args.condition} holds after none of prefixes 0..{replay.valid}")
            return 1
        return 0
    finally:
        if dog is not None:
            dog.stop()
        replay.close()


def cmd_history(args: argparse.Namespace) -> int:
    try:
        path = parse_path(args.path)
    except ConditionError as exc:
        raise CannotRun(exc.one_line("path")) from None
    search = HistorySearch(path)
    replay, dog = _watch(args, search, lambda: False)
    try:
        changes: list[PathChange] = search.changes
        if args.json:
            rows = [
                PathChange(c.seq, c.op, search.value(c.old), search.value(c.new)).to_json(
                    c.kind or _kind(replay, c.seq)
                )
                for c in changes
            ]
            sys.stdout.buffer.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2) + b"\n")
        else:
            value = search.value
            _out_lines(
                f"{c.seq}  {c.kind or _kind(replay, c.seq) or '?'}  "
                f"{_shown(value(c.old, frozen=True))} → {_shown(value(c.new, frozen=True))}"
                for c in changes
            )
        note = _searched_note(replay)
        if note:
            _err(note)
        if not changes:
            if not args.json:
                _err(f"{format_path(path)} never changed in events 1..{replay.valid}")
            return 1
        return 0
    finally:
        if dog is not None:
            dog.stop()
        replay.close()
