"""Command line: ``replay-tui [RUN]`` opens the app; ``check``, ``state``,
``when``, ``history`` and ``compare`` answer from the shell; ``sessions``
lists the agent sessions on this machine; ``serve`` puts the app in a browser;
``receive`` takes an agent's OTLP/HTTP into a trace file the app follows.

Each command's module adds its own parser (``add_parser``) and names its
handler; this module assembles them, in ``--help``'s order, and dispatches.

Exit codes are a contract: 0 verified / same, 1 a violation / different,
2 cannot run (with a one-line reason on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence

from replay_tui import __version__
from replay_tui.cli.options import Parser, name_samples
from replay_tui.core import line_core
from replay_tui.core.allocator import keep_big_blocks_mapped
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import split_link
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.supervision import supervised
from replay_tui.formats.langgraph.postgres import redact
from replay_tui.formats.sniff import run_sources
from replay_tui.reducers import pricing
from replay_tui.reducers.calling.guard import EventChanged, RulesStuck

__all__ = ["SUBCOMMANDS", "build_parser", "main", "split_link"]

#: The module of each command, which adds its parser (``add_parser``), in
#: ``--help``'s order (across: when, then history). A command's module is
#: imported only when that command runs or ``--help`` lists them all: each
#: brings what it needs (the questions, the report's renderer, an HTTP
#: server), and a command should not wait for the others'.
COMMAND_MODULES: dict[str, str] = {
    "open": "replay_tui.cli.app",
    "check": "replay_tui.cli.check",
    "state": "replay_tui.cli.state",
    "when": "replay_tui.cli.across",
    "history": "replay_tui.cli.across",
    "report": "replay_tui.cli.report",
    "diff": "replay_tui.cli.diff",
    "compare": "replay_tui.cli.compare",
    "sessions": "replay_tui.cli.sessions",
    "usage": "replay_tui.cli.usage",
    "serve": "replay_tui.cli.serve",
    "receive": "replay_tui.cli.receive.command",
}
#: The commands, in ``--help``'s order.
SUBCOMMANDS = tuple(COMMAND_MODULES)


DESCRIPTION = (
    "Step through an event-sourced run's history. "
    "With no command, opens the app on RUN (the bundled demo if RUN is omitted). "
    f"RUN is {run_sources(detail=True)}."
)

EPILOG = (
    "exit codes: 0 verified/same, 1 violation/different, 2 cannot run.\n"
    "examples:\n"
    "  replay-tui sample_runs/demo-001\n"
    "  replay-tui sample_runs/demo-001@10   (open at seq 10; or --at 10)\n"
    "  replay-tui --follow runs/live-run\n"
    "  replay-tui check sample_runs/demo-001 --json\n"
    "  replay-tui state sample_runs/refund-180 --at 2\n"
    "  replay-tui when sample_runs/demo-001 'phase == \"retrying\"'\n"
    "  replay-tui history sample_runs/demo-001 calls.call-003.status\n"
    "  replay-tui report sample_runs/demo-001 --at 10 --out ticket.md\n"
    "  replay-tui compare old_report.json new_report.json\n"
    "  replay-tui history.json   (a Temporal history: temporal workflow show "
    "--output json)\n"
    "  replay-tui trace.json   (an OpenTelemetry trace of an agent: OTLP/JSON, Jaeger, Tempo)\n"
    "  replay-tui check ~/.claude/projects/my-project   (each Claude Code session in it)\n"
    "  replay-tui sessions   (the Claude Code sessions and Codex rollouts here, newest first)\n"
    "  replay-tui serve sample_runs/demo-001   (the app in a browser, on 127.0.0.1:8000)\n"
    "  replay-tui receive traces.jsonl   (an agent's OTLP/HTTP on 127.0.0.1:4318, into a file "
    "to --follow)"
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: with ``command``, only that command's
    (what running it needs); without, every command's (``--help``)."""
    parser = Parser(
        prog="replay-tui",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"replay-tui {__version__} (line core: {line_core.describe()})",
    )
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}")
    wanted = COMMAND_MODULES.values() if command is None else [COMMAND_MODULES[command]]
    for name in dict.fromkeys(wanted):  # across adds both of its commands
        importlib.import_module(name).add_parser(sub)
    return parser


_URL = re.compile(r"postgres(?:ql)?://\S+")


def _said(exc: BaseException) -> str:
    """An error as its one line: controls escaped, and any PostgreSQL URL in
    it without its password, whichever message carried it."""
    return escape_controls(_URL.sub(lambda m: redact(m.group()), str(exc)))


def main(argv: Sequence[str] | None = None) -> int:
    keep_big_blocks_mapped()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (
        args_list[0] not in SUBCOMMANDS and args_list[0] not in ("-h", "--help", "--version")
    ):
        args_list.insert(0, "open")
    try:
        command = args_list[0] if args_list[0] in COMMAND_MODULES else None
        args = build_parser(command).parse_args(args_list)
    except CannotRun as exc:
        sys.stderr.write(f"replay-tui: {_said(exc)}\n")
        return 2
    handler: Callable[[argparse.Namespace], int] = args.func
    if getattr(args, "supervise", False) and args.reducer and args.rules_timeout > 0:
        # user rules: even stuck where nothing in this process can run, no hang
        return supervised(lambda: _dispatch(handler, args), args.rules_timeout)
    return _dispatch(handler, args)


def _dispatch(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command: its exit code, and every failure as one line on stderr."""
    try:
        name_samples(args)
        prices = getattr(args, "prices", None)
        pricing.use(None if prices is None else pricing.load_price_file(prices))
        return handler(args)
    except CannotRun as exc:
        sys.stderr.write(f"replay-tui: {_said(exc)}\n")
        return 2
    except (RulesStuck, EventChanged) as exc:  # in rules called outside a replay step
        sys.stderr.write(f"replay-tui: rules: {_said(exc)}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # never a traceback for users; REPLAY_TUI_DEBUG=1 shows it
        if os.environ.get("REPLAY_TUI_DEBUG"):
            raise
        sys.stderr.write(
            f"replay-tui: internal error: {type(exc).__name__}: {_said(exc)} "
            "(set REPLAY_TUI_DEBUG=1 for the traceback)\n"
        )
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
