"""``replay-tui serve``: the app in a browser, through textual-serve (the
``serve`` extra). Each browser tab runs its own app, this same Python on
``replay-tui open`` with the RUN and flags given here, so every key and flag
works as in the terminal. It listens on 127.0.0.1 unless ``--host`` says
otherwise, and then warns that the run is readable from there."""

from __future__ import annotations

import argparse
import errno
import shlex
import socket
import sys
from typing import TYPE_CHECKING

from replay_tui.cli.app import app_arguments, app_of
from replay_tui.cli.args import port_number
from replay_tui.cli.options import Parser, out
from replay_tui.core.errors import CannotRun
from replay_tui.core.net import is_loopback
from replay_tui.core.safe_text import escape_controls

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers

DEFAULT_HOST = "127.0.0.1"
#: textual-serve's own default.
DEFAULT_PORT = 8000
#: Said when textual-serve is not installed: it is an extra, not a dependency.
INSTALL = "serve needs textual-serve: pip install 'replay-tui[serve]'"
#: Hosts that mean every interface of this machine.
WILDCARDS = ("0.0.0.0", "::", "")


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "serve",
        help="the app in a browser (textual-serve), on 127.0.0.1 unless --host",
        description="Serve the app on RUN as a web page: each browser tab runs its own app, "
        "with every key and flag as in the terminal. Listens on 127.0.0.1 only unless --host "
        "is given; anyone who can reach the address reads the run and drives the app.",
    )
    app_arguments(parser)
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="H",
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only; 0.0.0.0: "
        "every interface, and everyone who reaches it can read the run)",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"port to listen on (default {DEFAULT_PORT})",
    )
    parser.set_defaults(func=cmd_serve)


def app_parser() -> argparse.ArgumentParser:
    """A parser of ``open``'s arguments alone: what the served app is given."""
    parser = Parser(prog="replay-tui open", add_help=False)
    app_arguments(parser)
    return parser


def app_argv(args: argparse.Namespace) -> list[str]:
    """``open``'s arguments as given to ``serve``, back as a command line:
    each flag that differs from its default as ``--flag=VALUE`` (a value
    starting with ``-`` stays a value), then ``--`` and RUN."""
    argv: list[str] = []
    run: list[str] = []
    for action in app_parser()._actions:
        value = getattr(args, action.dest)
        if not action.option_strings:
            run = [] if value is None else ["--", str(value)]
        elif isinstance(action, argparse._StoreTrueAction):
            argv += [action.option_strings[0]] if value else []
        elif isinstance(action, argparse._AppendAction):
            argv += [f"{action.option_strings[0]}={v}" for v in value]
        elif value is not None and value != action.default:
            argv.append(f"{action.option_strings[0]}={value}")
    return argv + run


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs per browser: this Python on
    ``replay-tui open``, every argument quoted, so no RUN or flag value
    (spaces, ``;``, ``$(...)``) is ever shell code."""
    return shlex.join([sys.executable, "-m", "replay_tui", "open", *app_argv(args)])


def url_host(host: str) -> str:
    """``host`` as a URL writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def exposed_at(host: str, port: int) -> str | None:
    """Where a server on ``host:port`` can be reached from, in words; None
    on a loopback address (this machine only)."""
    if is_loopback(host):
        return None
    return (
        f"every address of this machine, port {port}"
        if host in WILDCARDS
        else f"{url_host(host)}:{port}"
    )


def exposure_warning(host: str, port: int, run: str) -> str | None:
    """What ``--host`` exposes, said on start; None on a loopback address."""
    where = exposed_at(host, port)
    if where is None:
        return None
    return (
        f"warning: listening on {where}: anyone who can reach it can read {run} (its events, "
        "receipts and state, secrets in them too: r reveals masked values) and drive the app"
    )


def check_port(host: str, port: int) -> None:
    """Bind ``host:port`` as the server will, and let go: a port in use (or
    an address not this machine's) is one line before anything is served."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise CannotRun(f"--host {host}: {exc.strerror}") from None
    unavailable: OSError | None = None
    bound = False
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno != errno.EADDRNOTAVAIL:
                    raise CannotRun(bind_failure(host, port, exc)) from None
                unavailable = exc  # as asyncio does: that family is off here; the others serve
            else:
                bound = True
    if not bound and unavailable is not None:
        raise CannotRun(bind_failure(host, port, unavailable))


def bind_failure(host: str, port: int, exc: OSError) -> str:
    """One line for a server that cannot listen on ``host:port``."""
    at = f"{url_host(host)}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return f"{at}: the port is in use (another server?): pick another with --port N"
    if exc.errno == errno.EACCES:
        return f"{at}: not allowed to listen there (ports below 1024 need root): try --port 8000"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"--host {host}: not an address of this machine"
    return f"{at}: cannot listen: {exc.strerror or exc}"


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from replay_tui.ui.serve import RunServer
    except ImportError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("textual_serve", "aiohttp"):
            raise
        raise CannotRun(INSTALL) from None
    # the run opened as the terminal would: a RUN or flag it refuses is refused here,
    # in one line, before any browser gets a page that closes at once
    app = app_of(args)
    name = app.replay.paths.name if args.run is not None else "demo-001 (bundled)"
    app.replay.close()
    if app.b is not None:
        app.b.close()
    host, port = args.host, args.port
    check_port(host, port)
    warning = exposure_warning(host, port, name)
    if warning is not None:
        sys.stderr.write(f"replay-tui serve: {escape_controls(warning)}\n")
    here = "127.0.0.1" if host in WILDCARDS else url_host(host)
    out(
        f"replay-tui serve: {name} at http://{here}:{port}"
        + (" (or this machine's address)" if host in WILDCARDS else "")
        + "\n  open it in a browser: each tab runs its own app; Ctrl-C stops"
    )
    sys.stdout.flush()
    server = RunServer(
        app_command(args),
        host=host,
        port=port,
        title=f"replay-tui {name}",
        loopback_only=is_loopback(host),
    )
    try:
        server.serve()
    except OSError as exc:  # taken between the check and the server's own bind
        raise CannotRun(bind_failure(host, port, exc)) from None
    out("replay-tui serve: stopped")
    return 0
