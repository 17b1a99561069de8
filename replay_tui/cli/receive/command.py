"""``replay-tui receive``: live without a Collector. Listens for OTLP/HTTP
(JSON and protobuf) on 127.0.0.1:4318, where exporters send by default, and
appends each export request to FILE as a line of OTLP/JSON, as the
Collector's file exporter writes; the app follows that file
(:mod:`replay_tui.cli.receive.server`). Loopback only unless ``--host``
says otherwise, and then it warns; nothing is written but FILE."""

from __future__ import annotations

import argparse
import shlex
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from replay_tui.cli.args import byte_count, port_or_any
from replay_tui.cli.options import out
from replay_tui.cli.receive.server import DEFAULT_MAX_BYTES, CannotOpen, Receiver
from replay_tui.cli.serve import WILDCARDS, bind_failure, exposed_at, url_host
from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.formats.otel.lines import collector_lines

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers

DEFAULT_HOST = "127.0.0.1"
#: OTLP/HTTP's port: where exporters send unless told otherwise.
DEFAULT_PORT = 4318

EPILOG = (
    "Point the agent's OTLP exporter here (protobuf, the SDKs' default, or JSON;\n"
    "gzip or not):\n"
    "  export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318\n"
    "  export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\n"
    "Each request to /v1/traces or /v1/logs becomes one line of FILE, the OTLP/JSON\n"
    "the Collector's file exporter writes (JSON as it was sent). Refused: other paths\n"
    "(404) and methods (405), other content types (415), bodies over --max-bytes,\n"
    "compressed or not, or that decode to 24 times their size (413), bodies that are\n"
    "not an export request (400); the guide's OpenTelemetry page lists every answer.\n"
    "examples:\n"
    "  replay-tui receive traces.jsonl   (then, in another terminal:)\n"
    "  replay-tui --follow --format otel traces.jsonl\n"
    "  replay-tui receive traces.jsonl --port 0 --verbose   (any free port; a line a request)\n"
    "  replay-tui check traces.jsonl   (what was received, once the agent is done)"
)


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "receive",
        help="take an agent's OTLP/HTTP (127.0.0.1:4318) into a trace file the app follows",
        description="Listen for OpenTelemetry traces and logs sent over OTLP/HTTP (protobuf or\n"
        "JSON) and append each export request to FILE as one line of OTLP/JSON, so\n"
        "`replay-tui --follow --format otel FILE` shows an agent's run as it happens,\n"
        "with no Collector. Listens on 127.0.0.1 only unless --host is given; writes\n"
        "nothing but FILE. Ctrl-C stops.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "file",
        metavar="FILE",
        help="the trace file to append to (created if missing; if not empty, it must be "
        "such lines already)",
    )
    parser.add_argument(
        "--port",
        type=port_or_any,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"port to listen on (default {DEFAULT_PORT}, OTLP/HTTP's; 0: any free port, "
        "said on start)",
    )
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="H",
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only; 0.0.0.0: "
        "every interface, and everyone who reaches it can write to FILE)",
    )
    parser.add_argument(
        "--max-bytes",
        type=byte_count,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help="the largest request taken, before and after decompression, in bytes (K, M, G: "
        f"KiB, MiB, GiB; default {DEFAULT_MAX_BYTES >> 20}M)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="a line on stderr per request")
    parser.set_defaults(func=cmd_receive)


def check_file(path: Path) -> None:
    """FILE may be appended to: missing, empty, or the Collector's JSON lines
    ending in a whole line (anything else would be damaged by appending)."""
    if path.is_dir():
        raise CannotRun(f"{path}: a folder: give a file to append to")
    if not path.parent.is_dir():
        raise CannotRun(f"{path}: no folder {path.parent} to write it in")
    if not path.exists():
        return
    if not path.is_file():
        raise CannotRun(f"{path}: not a regular file")
    if not collector_lines(path):
        raise CannotRun(
            f"{path}: holds something other than OTLP/JSON lines: give a new file "
            "(or one receive wrote)"
        )
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(max(size - 1, 0))
            last = f.read(1) or b"\n"
    except OSError as exc:
        raise CannotRun(f"{path}: cannot read: {exc.strerror or exc}") from None
    if last != b"\n":
        raise CannotRun(f"{path}: its last line is not ended (still being written?)")


def exposure_warning(host: str, port: int, file: str) -> str | None:
    """What ``--host`` exposes, said on start; None on a loopback address."""
    where = exposed_at(host, port)
    if where is None:
        return None
    return f"warning: listening on {where}: anyone who can reach it can append to {file}"


def listening_on(bound: str, port: int) -> str:
    """Where the server listens (``bound``: the address it is bound to), in
    words: its URL, or, bound to every interface, that and a URL that reaches it here."""
    if bound in WILDCARDS:
        here = "[::1]" if ":" in bound else "127.0.0.1"
        return f"every interface, port {port} ({bound}; from this machine: http://{here}:{port})"
    return f"http://{url_host(bound)}:{port}"


def _say(text: str) -> None:
    sys.stderr.write(f"replay-tui receive: {text}\n")


def cmd_receive(args: argparse.Namespace) -> int:
    path = Path(args.file)
    check_file(path)
    host = args.host
    try:
        server = Receiver(
            host, args.port, path, max_bytes=args.max_bytes, log=_say if args.verbose else None
        )
    except socket.gaierror as exc:
        raise CannotRun(f"--host {host}: {exc.strerror}") from None
    except OSError as exc:
        raise CannotRun(bind_failure(host, args.port, exc)) from None
    except CannotOpen as exc:
        raise CannotRun(str(exc)) from None
    port = server.port
    warning = exposure_warning(host, port, args.file)
    if warning is not None:
        _say(escape_controls(warning))
    out(
        f"replay-tui receive: listening on {listening_on(server.host, port)} (OTLP/HTTP, JSON "
        f"and protobuf): appending to {args.file}; follow it with: replay-tui --follow "
        f"--format otel {shlex.quote(args.file)}"
    )
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    finally:
        lines = server.sink.lines
        server.server_close()
    out(f"replay-tui receive: stopped ({plural(lines, 'line')} appended)")
    return 0
