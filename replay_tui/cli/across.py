"""``replay-tui when`` and ``replay-tui history``: questions across time, from
the shell.

Both run one strict forward pass (``check``'s engine, JSON checkpoints, plain
states) with a watcher on it (see :mod:`replay_tui.questions.across`): the cost is that
of ``check`` plus a few lookups an event. ``when`` without ``--all`` stops at
the first answer.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.cli.options import rules_options
from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import split_link
from replay_tui.core.safe_text import escape_controls
from replay_tui.engine.open import open_replay
from replay_tui.formats.envelope import Event
from replay_tui.formats.sniff import run_sources
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
from replay_tui.state.persistent import json_default

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers
    from replay_tui.engine.replay import Replay

#: Longest value shown in human output (``--json`` has them whole).
SHOWN = 80

CONDITION_HELP = """\
paths: keys joined by dots (calls.call-003.status), [n] for a list item
  (checks[0].passed; checks.0.passed reads a list the same way), double quotes
  for a key with dots, spaces or quotes (calls."a.b".status); bare keys hold
  letters, digits, _ and -. Every command prints paths this way.
conditions: PATH OP VALUE with == != < <= > >= and VALUE a JSON literal
  ("retrying", 1000, true, null); PATH exists; len(PATH) as a number;
  combined with and, or, not and parentheses. An absent path makes a
  comparison false (absent is not null: use exists).
exit codes: 0 found, 1 never, 2 a bad condition or a run that cannot be read.
examples:
  replay-tui when sample_runs/demo-001 'phase == "retrying"'
  replay-tui when sample_runs/demo-001 --all \\
      'calls.call-003.status == "allowed" or phase == "running"'
  replay-tui when RUN 'spent.tokens > 1000 and not calls.call-007 exists'
  replay-tui history sample_runs/demo-001 calls.call-003.status
"""


def add_parser(sub: Subparsers) -> None:
    """``when``, then ``history``."""
    p_when = sub.add_parser(
        "when",
        help="the seq at which a condition on the state turns true",
        description=(
            "Print the seq at which CONDITION turns true: false after n-1 events, true after n "
            "(0 if the initial state satisfies it); with --all, every such seq. Each line: the "
            "seq, the event's kind, and the changes that made it true."
        ),
        epilog=CONDITION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_when.add_argument(
        "run", help=f"the run: {run_sources()}; RUN@SEQ searches events 1..SEQ only"
    )
    p_when.add_argument("condition", help="e.g. 'phase == \"retrying\"' (quote it for the shell)")
    p_when.add_argument("--all", action="store_true", help="every seq it turns true, not the first")
    p_when.add_argument(
        "--json", action="store_true", help='print {"condition": ..., "seqs": [...], ...}'
    )
    rules_options(p_when)
    p_when.set_defaults(func=cmd_when, supervise=True)

    p_hist = sub.add_parser(
        "history",
        help="every seq at which the value at a state path changed",
        description=(
            "Print every seq at which the value at PATH changed, including when an object "
            "holding it was added or removed: seq, kind, old -> new (absent when not there)."
        ),
        epilog=CONDITION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_hist.add_argument(
        "run", help=f"the run: {run_sources()}; RUN@SEQ looks at events 1..SEQ only"
    )
    p_hist.add_argument("path", help="e.g. calls.call-003.status, checks[0].passed")
    form = p_hist.add_mutually_exclusive_group()
    form.add_argument(
        "--json", action="store_true", help='print [{"seq", "kind", "op", "old", "new"}, ...]'
    )
    form.add_argument(
        "--csv",
        action="store_true",
        help="print seq,value,kind rows for a spreadsheet: the value at 0 (before any event), "
        "then after each change; empty where absent, JSON for objects and lists",
    )
    rules_options(p_hist)
    p_hist.set_defaults(func=cmd_history, supervise=True)


def _shown(value: Any) -> str:
    return shown_value(value, SHOWN)


def _kind(replay: Replay, seq: int) -> str | None:
    if seq < 1:
        return None
    event = replay.event(seq - 1)
    return event.kind if isinstance(event, Event) else None


def _searched_note(replay: Replay, at: int | None) -> str | None:
    """Why only a prefix was searched: ``RUN@SEQ`` named it, or strict
    replay stopped early."""
    if replay.error is None:
        return None if at is None else f"searched the prefix up to seq {at} only ({at} events)"
    return (
        f"searched the valid prefix only (events 1..{replay.valid}): strict replay stopped "
        f"{replay.error.one_line()}"
    )


def _stop_json(replay: Replay) -> dict[str, Any] | None:
    """Where strict replay stopped, if it did in what was read: the seq,
    line and code at which the valid prefix ended."""
    error = replay.error
    if error is None:
        return None
    seq = error.seq if error.seq is not None else replay.valid + 1
    return {"seq": seq, "line": error.line, "code": error.code, "valid": replay.valid}


def _completeness(replay: Replay, answered: bool, at: int | None) -> dict[str, Any]:
    """The fields every question's JSON ends with: how far it searched (the
    prefix ``RUN@SEQ`` named, if one), whether the answer is whole
    (``answered``: it cannot change, as a first answer found), and where
    strict replay stopped if it did."""
    complete = answered or replay.error is None
    return {
        **({} if at is None else {"prefix": at}),
        "searched": replay.valid,
        "complete": complete,
        "stop": _stop_json(replay),
        "error": replay.error.to_json() if replay.error is not None and not complete else None,
    }


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
    at: int | None,
) -> tuple[Replay, Any]:
    """Run the forward pass with ``search`` watching it (up to ``at`` events
    for ``RUN@SEQ``). A watched object too big to compare after every event:
    run it again keeping the patch log (the app's engine), and ask that."""
    from replay_tui.engine.batch import judge
    from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET

    run, _ = split_link(args.run)
    assert run is not None
    replay, dog = open_replay(
        run,
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
                replay.advance(cancelled=stop, limit=at)
                if not stop():
                    judge(replay, at, run)
        except TooBigToWatch:
            if dog is not None:
                dog.stop()
            replay.close()
            replay, dog = open_replay(
                run,
                args.reducer,
                timeout=args.rules_timeout,
                fmt=args.format,
                history=True,
                record_patches=True,  # the search reads every event's patches
            )
            judge(replay, at, run)
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
        item: dict[str, Any] = {"path": format_path(path), "watched": needs[path]}
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
    _, at = split_link(args.run)
    replay, dog = _watch(args, search, lambda: search.done, at)
    try:
        needs = search.watcher.needs
        note = None if search.done else _searched_note(replay, at)
        if args.json:
            out = {
                "condition": args.condition,
                "seqs": [t.seq for t in search.turns],
                "turns": [
                    _turn_json(t, t.kind or _kind(replay, t.seq), needs) for t in search.turns
                ],
                **_completeness(replay, search.done, at),
            }
            if search.done and search.turns:  # stopped at the first answer
                out["searched"] = min(replay.valid, search.turns[-1].seq)
            sys.stdout.buffer.write(strict_json.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
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


def _cell(value: Any) -> str:
    """A value as a spreadsheet reads it: a string as itself, a number, true
    or false, null, JSON for an object or list, nothing where absent."""
    if value is ABSENT:
        return ""
    if type(value) is str:
        return value
    return strict_json.dumps(value, default=json_default).decode()


def _csv_rows(
    changes: list[PathChange], value: Callable[[Any], Any], kind: Callable[[PathChange], str]
) -> None:
    """``history --csv``: the value at 0, then after each change. Control
    characters are escaped only when the rows go to a terminal."""
    safe = escape_controls if sys.stdout.isatty() else (lambda text: text)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["seq", "value", "kind"])
    if changes:
        out.writerow(["0", safe(_cell(value(changes[0].old))), ""])
    for c in changes:
        out.writerow([str(c.seq), safe(_cell(value(c.new))), safe(kind(c))])


def cmd_history(args: argparse.Namespace) -> int:
    try:
        path = parse_path(args.path)
    except ConditionError as exc:
        raise CannotRun(exc.one_line("path")) from None
    search = HistorySearch(path)
    _, at = split_link(args.run)
    replay, dog = _watch(args, search, lambda: False, at)
    try:
        changes: list[PathChange] = search.changes
        if args.json:
            rows = [
                PathChange(c.seq, c.op, search.value(c.old), search.value(c.new)).to_json(
                    c.kind or _kind(replay, c.seq)
                )
                for c in changes
            ]
            doc = {"changes": rows, **_completeness(replay, False, at)}
            sys.stdout.buffer.write(strict_json.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        elif args.csv:
            _csv_rows(changes, search.value, lambda c: c.kind or _kind(replay, c.seq) or "")
        else:
            value = search.value
            _out_lines(
                f"{c.seq}  {c.kind or _kind(replay, c.seq) or '?'}  "
                f"{_shown(value(c.old, frozen=True))} → {_shown(value(c.new, frozen=True))}"
                for c in changes
            )
        note = _searched_note(replay, at)
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
