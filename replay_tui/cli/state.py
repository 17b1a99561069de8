"""``replay-tui state``: the state after the first N events (or the change
event N made), as canonical JSON."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from replay_tui.cli.args import seq_or_zero
from replay_tui.cli.options import rules_options, skip_option
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import run_and_seq
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.engine.open import open_replay
from replay_tui.formats.sniff import run_sources
from replay_tui.questions.sidebyside import past_the_end, skip_seqs, without
from replay_tui.state import canonical

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers
    from replay_tui.engine.replay import Replay


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("state", help="print the state after the first N events")
    parser.add_argument("run", help=f"the run: {run_sources()}; RUN@N is the state after N events")
    parser.add_argument(
        "--at",
        type=seq_or_zero,
        metavar="N",
        help="prefix length (0..): the state after N events (or give RUN@N)",
    )
    parser.add_argument("--diff", action="store_true", help="print the change made by event N")
    skip_option(
        parser,
        "the hypothetical branch without event SEQ (again for more); labelled on stderr",
    )
    parser.add_argument("--pretty", action="store_true", help="indent the JSON")
    rules_options(parser)
    parser.set_defaults(func=cmd_state, supervise=True)


def cmd_state(args: argparse.Namespace) -> int:
    run, at = run_and_seq(args.run, args.at)
    if at is None:
        raise CannotRun(
            f"state needs a seq: {args.run}@N or --at N, the state after N events "
            "(0: the initial state)"
        )
    n = at
    if n < 0 or (args.diff and n < 1):
        raise CannotRun(f"--at {n}: {'events are numbered from 1' if args.diff else 'N >= 0'}")
    skip = skip_seqs(args.skip)
    # the patch log gives --diff the event's own change, not a diff of two states
    replay, dog = open_replay(
        run,
        args.reducer,
        timeout=args.rules_timeout,
        fmt=args.format,
        history=args.diff,
        skip=skip,
    )
    try:
        replay.advance(limit=n)
        if replay.valid < n or (skip and skip[-1] > len(replay.ledger)):
            replay.finish()  # the whole ledger read: every line counted
        past = past_the_end(skip, len(replay.ledger))
        if past is not None:
            raise CannotRun(past)
        if skip:
            them = "it" if len(skip) == 1 else "them"
            sys.stderr.write(
                f"replay-tui: hypothetical: {without(skip)}: the branch of this run that "
                f"leaves {them} out, not what happened\n"
            )
        if replay.valid < n:
            if replay.error is not None:
                sys.stderr.write(
                    f"replay-tui: the valid prefix ends at {plural(replay.valid, 'event')}; "
                    f"first error {escape_controls(replay.error.one_line())}\n"
                )
                return 1
            raise CannotRun(f"--at {n}: the run has only {plural(replay.valid, 'event')}")
        dump = canonical.dumps_pretty if args.pretty else canonical.dumps
        sys.stdout.buffer.write(dump(_answer(replay, n, args.diff)) + b"\n")
        return 0
    finally:
        if dog is not None:
            dog.stop()
        replay.close()


def _answer(replay: Replay, n: int, diff: bool) -> Any:
    """The state after ``n`` events, or (``diff``) the change event ``n`` made."""
    if not diff:
        return replay.state_at(n)
    step = replay.step(n)
    return {
        "seq": n,
        "kind": step.event.kind,
        "rule": step.explanation,
        "changes": [c.to_json() for c in step.changes],
    }
