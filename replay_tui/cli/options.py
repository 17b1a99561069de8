"""What the commands share: the parser whose usage errors are one line, the
options several commands take (``--reducer``, ``--rules-timeout``,
``--format``) and the print for people."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from replay_tui.cli.args import event_seq, seconds
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import split_link
from replay_tui.core.safe_text import escape_controls
from replay_tui.formats.inspect.log import looks_like_log
from replay_tui.formats.langgraph.postgres import is_url, shown_run
from replay_tui.formats.langgraph.sqlite import is_sqlite
from replay_tui.formats.langgraph.store import thread_run
from replay_tui.formats.run import FORMATS
from replay_tui.reducers import DEFAULT, available
from replay_tui.reducers.calling.guard import DEFAULT_TIMEOUT
from replay_tui.reducers.langgraph.graph import GRAPH_SPEC


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2 via CannotRun;
    ``--thread`` / ``--ns`` are folded into the RUN arguments (:func:`with_thread`)."""

    def error(self, message: str) -> NoReturn:
        raise CannotRun(f"{message} (see '{self.prog} --help')")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, rest = super().parse_known_args(args, namespace)
        with_thread(parsed)
        with_graph(parsed)
        return parsed, rest


if TYPE_CHECKING:
    #: What ``Parser.add_subparsers`` returns: each command's module adds its parser to it.
    Subparsers = argparse._SubParsersAction[Parser]


def reducer_help() -> str:
    return (
        f"rules to replay with: a name ({', '.join(sorted(available()))}), "
        "package.module:NAME, or path/to/rules.py:NAME; default: the built-in rules that "
        f"know the first event's kind ({DEFAULT} first)"
    )


def reducer_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reducer", help=reducer_help())
    graph_option(parser)


def graph_option(parser: argparse.ArgumentParser) -> None:
    """``--graph module:attr``: a LangGraph thread's reducers from the user's graph."""
    parser.add_argument(
        "--graph",
        metavar="MODULE:ATTR",
        help="a LangGraph thread's channel reducers from your graph (a StateGraph or its "
        "compiled graph, imported as uvicorn imports module:app, the current directory "
        "first), not inferred from the thread",
    )


def with_graph(args: argparse.Namespace) -> None:
    """``--graph`` as the rules every process that opens the run loads
    (``--reducer``, or diff's ``--rules-a`` / ``--rules-b``)."""
    graph = getattr(args, "graph", None)
    if graph is None:
        return
    spec = GRAPH_SPEC + graph
    sides = ("rules_a", "rules_b") if hasattr(args, "rules_a") else ("reducer",)
    for side in sides:
        given = getattr(args, side, None)
        if given is not None and given != spec:
            flag = "--" + side.replace("_", "-")
            raise CannotRun(
                f"--graph and {flag}: give one (--graph is the langgraph rules with "
                "your graph's reducers)"
            )
        setattr(args, side, spec)


def timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules-timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"rules (other than the built-in ones) that run longer than S seconds on one "
        f"event are stopped and reported as reducer_error (default {DEFAULT_TIMEOUT:g}; "
        "0: wait forever)",
    )


def skip_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--skip SEQ``, as often as wanted: the what-if branch without those events."""
    parser.add_argument(
        "--skip", type=event_seq, action="append", default=[], metavar="SEQ", help=help
    )


def format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="what RUN is: a run folder / events.jsonl, a Temporal history export "
        "(temporal workflow show --output json), a Claude Code transcript, a Codex "
        "rollout or a Gemini CLI session (read in place, the file is the ledger), an "
        "OpenTelemetry trace (OTLP/JSON, the Collector's JSON lines, a Jaeger or Tempo "
        "export), a LangGraph checkpointer database (a thread of it, see --thread), an "
        "Inspect AI log (.eval or .json: a sample of it, see --sample); default auto: a file that "
        'starts like {"events": [ is a Temporal history, like {"resourceSpans": a trace, a '
        "file whose first records are Claude Code's, Codex's or Gemini CLI's is that session",
    )


def thread_option(parser: argparse.ArgumentParser) -> None:
    """``--thread ID`` and ``--ns NS``: which thread of a LangGraph database."""
    parser.add_argument(
        "--thread",
        metavar="ID",
        help="a LangGraph checkpointer database's thread (RUN#thread=ID says the same; "
        "default: its only thread; check: every thread)",
    )
    parser.add_argument(
        "--ns",
        metavar="NS",
        help="the thread's checkpoint namespace (a subgraph's; default: the root graph)",
    )


def with_thread(args: argparse.Namespace) -> None:
    """``--thread`` / ``--ns`` folded into each RUN argument (``RUN#thread=ID``,
    before any ``@SEQ``), so every command and process that takes a RUN has it."""
    thread, ns = getattr(args, "thread", None), getattr(args, "ns", None)
    if (thread is None and ns is None) or getattr(args, "thread_folded", False):
        return  # (a command's own parser folds them; the top parser sees them again)
    args.thread_folded = True
    if thread is None:
        raise CannotRun("--ns needs --thread ID (which thread's namespace)")

    def named(run: str | None) -> str | None:
        if run is None:
            return None
        path, seq = split_link(run)
        assert path is not None
        if Path(path).is_file() and looks_like_log(Path(path)):
            raise CannotRun(
                f"{path}: an Inspect AI log, whose runs are its samples, not threads: "
                "name one with --sample ID[:EPOCH] (or LOG#ID:EPOCH)"
            )
        joined = thread_run(path, thread, ns or "")
        return joined if seq is None else f"{joined}@{seq}"

    for attr in ("run", "a", "b"):
        value = getattr(args, attr, None)
        if isinstance(value, list):
            setattr(args, attr, [named(v) for v in value])
        elif isinstance(value, str):
            setattr(args, attr, named(value))


def sample_option(parser: argparse.ArgumentParser) -> None:
    """``--sample ID[:EPOCH]``: which sample of an Inspect log is the run."""
    parser.add_argument(
        "--sample",
        metavar="ID[:EPOCH]",
        help="an Inspect AI log's sample to open as the run (epoch 1 unless given); "
        "also written RUN#ID:EPOCH",
    )


#: The arguments that name runs, in the commands that take them.
_RUN_ARGS = ("run", "a", "b", "against")


def name_samples(args: argparse.Namespace) -> None:
    """``--sample ID[:EPOCH]`` put into each run the command names
    (``LOG#ID:EPOCH``, kept before any ``@SEQ``) that names none of its own;
    :class:`CannotRun` if a run is no Inspect log."""
    sample = getattr(args, "sample", None)
    if sample is None:
        return
    if getattr(args, "thread", None) is not None:
        raise CannotRun(
            "--thread names a LangGraph database's thread and --sample an Inspect AI log's "
            "sample: give the one the run's file has"
        )
    fmt = getattr(args, "format", "auto")
    for name in _RUN_ARGS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            setattr(args, name, _with_sample(value, sample, fmt))
        elif isinstance(value, list):
            setattr(args, name, [_with_sample(v, sample, fmt) for v in value])


def _with_sample(run: str, sample: str, fmt: str) -> str:
    path, seq = split_link(run)
    assert path is not None
    if "#" in path and not Path(path).exists():
        return run  # names its own sample (LOG#ID:EPOCH): that one
    if is_url(path) or (fmt != "inspect" and Path(path).is_file() and is_sqlite(Path(path))):
        raise CannotRun(
            f"{shown_run(path)}: a LangGraph checkpointer database, whose runs are its threads, "
            "not samples: name one with --thread ID (or DB#thread=ID)"
        )
    if not Path(path).is_file() or not (fmt == "inspect" or looks_like_log(Path(path))):
        raise CannotRun(f"{path}: --sample names a sample of an Inspect log, and this is none")
    return f"{path}#{sample}" + ("" if seq is None else f"@{seq}")


def prices_option(parser: argparse.ArgumentParser) -> None:
    """``--prices FILE``: the user's prices, before genai-prices' (read by
    :func:`replay_tui.cli.commands.main` before the command runs)."""
    parser.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="your prices (TOML or JSON: model glob, provider, USD per million input, output, "
        "cache read and cache write tokens) for the models they name, before the bundled "
        "genai-prices data; see the guide's Cost page",
    )


def rules_options(parser: argparse.ArgumentParser) -> None:
    """``--reducer``, ``--rules-timeout``, ``--format``, ``--thread`` /
    ``--ns``, ``--sample`` and ``--prices``, in that order."""
    reducer_option(parser)
    timeout_option(parser)
    format_option(parser)
    thread_option(parser)
    sample_option(parser)
    prices_option(parser)


def out(text: str) -> None:
    """Print for people: run data (kinds, messages, file names) is escaped so
    it cannot act on the terminal."""
    safe = "\n".join(escape_controls(line) for line in text.rstrip("\n").split("\n"))
    sys.stdout.write(safe + "\n")
