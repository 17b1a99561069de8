"""The app in a browser: textual-serve's server, which runs a command per
browser connection (here ``replay-tui open`` with the served RUN and flags)
and carries its screen and keys over a websocket.

Two checks textual-serve leaves out, because a run's events and receipts may
hold secrets: the websocket answers only a page of this server's own origin
(a web page elsewhere that the same browser visits cannot open the app on
``ws://127.0.0.1:8000`` and read it), and a server on a loopback address
answers only requests that name a loopback host (a DNS name rebound to
127.0.0.1 gets nothing). The page's URLs are those the browser used, so a
server on ``0.0.0.0`` works at any of the machine's addresses.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
from pathlib import Path
from typing import Any

from aiohttp import web
from textual_serve.server import Server

from replay_tui.core.net import is_loopback

#: The folder of the page the browser is given (``app_index.html``).
PAGE = Path(__file__).resolve().parent / "serve_page"

#: What a Host header may hold: a name, an IPv4 or a bracketed IPv6 address, a port.
HOST_HEADER = re.compile(r"[A-Za-z0-9.\-]+(:\d+)?|\[[0-9A-Fa-f:.]+\](:\d+)?")


class RunServer(Server):
    """textual-serve's :class:`Server` for one run: no banner of its own (the
    command says what is served where), and the checks above."""

    def __init__(
        self, command: str, *, host: str, port: int, title: str, loopback_only: bool
    ) -> None:
        # our page: no web font fetched, and a card that says the app is starting
        super().__init__(command, host=host, port=port, title=title, templates_path=PAGE)
        #: Listening on a loopback address: requests must name a loopback host.
        self.loopback_only = loopback_only
        #: The handlers of the open tabs' websockets, each with its app process.
        self.tabs: set[asyncio.Task[Any]] = set()

    def initialize_logging(self) -> None:
        super().initialize_logging()
        # a line per HTTP request buries the ones that matter
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: textual-serve's logo and its "Serving <command>" line
        (this Python's path) would say less than replay-tui's own lines."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Ctrl-C: each open tab's app is told to quit and waited for (else
        aiohttp would wait a minute for the tabs to close by themselves)."""
        tabs = list(self.tabs)
        for tab in tabs:
            tab.cancel()  # textual-serve's handler then closes the socket and stops the app
        if tabs:
            await asyncio.wait(tabs, timeout=10)

    def refuse(self, request: web.Request) -> None:
        """Raise the answer to ``request`` if it is not to be served."""
        refused = self.refusal(request)
        if refused is not None:
            raise refused

    def refusal(self, request: web.Request) -> web.HTTPException | None:
        """Why ``request`` is not answered, or None."""
        host = request.host
        if not HOST_HEADER.fullmatch(host):
            return web.HTTPBadRequest(text="replay-tui serve: a bad Host header\n")
        name = host[1 : host.index("]")] if host.startswith("[") else host.partition(":")[0]
        if self.loopback_only and not is_loopback(name):
            return web.HTTPForbidden(
                text=f"replay-tui serve: this server answers 127.0.0.1 and localhost, not {host}\n"
            )
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{host}":
            return web.HTTPForbidden(
                text="replay-tui serve: the app opens only from this server's own page\n"
            )
        return None

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        self.refuse(request)
        # the page's websocket URL is the address the browser used; no await
        # comes between this and the page's rendering, so requests cannot mix
        self.public_url = f"{request.scheme}://{request.host}"
        return await super().handle_index(request)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        self.refuse(request)
        sys.stderr.write(f"replay-tui serve: a browser at {request.remote} opened the app\n")
        tab = asyncio.current_task()
        assert tab is not None  # aiohttp runs each handler in a task
        self.tabs.add(tab)
        try:
            return await super().handle_websocket(request)
        finally:
            self.tabs.discard(tab)

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        self.refuse(request)
        return await super().handle_download(request)
