"""The app in a browser, as a person would see it: ``replay-tui serve`` as a
subprocess on a free port, Debian's headless Chromium (driven by Playwright,
no browser download) on its page, and the terminal's screen as text.

The page's terminal is xterm.js drawing to a canvas, so there is no DOM text
to read. :data:`HOOK` runs in the page before textual.js and keeps the
``Terminal`` that textual.js makes (``this.terminal = new Terminal(...)``);
:func:`screen_text` reads its buffer, the very cells xterm.js paints. The
screenshot is the picture of them. Used by tests/cli/test_serve.py and by
screenshots/make_serve_screenshot.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.helpers.waiting import HANG, wait_until

CHROMIUM = Path("/usr/bin/chromium")
#: Headless, offline and quiet: nothing but the served page is fetched.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Keeps textual.js's xterm.js Terminal in ``window.__replayTerminal``: the
#: first object given a ``terminal`` that has a ``buffer`` is it.
HOOK = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {
      value, writable: true, configurable: true, enumerable: true,
    });
    if (value && value.buffer && !window.__replayTerminal) window.__replayTerminal = value;
  },
});
"""

#: The screen's rows as text, or null before textual.js made its terminal.
SCREEN = """() => {
  const t = window.__replayTerminal;
  if (!t) return null;
  const b = t.buffer.active, rows = [];
  for (let y = 0; y < t.rows; y++) {
    const line = b.getLine(b.viewportY + y);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
}"""


def free_port() -> int:
    """A port nothing listens on at this moment."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


@dataclass
class Served:
    """A running ``replay-tui serve``; ``out`` and ``err`` once stopped."""

    proc: subprocess.Popen[str]
    port: int
    out: str = ""
    err: str = ""
    stopped: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        """Ctrl-C, as a person stops it; killed if it has not stopped after
        :data:`HANG` seconds (a hang)."""
        if self.stopped:
            return
        self.stopped = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            out, err = self.proc.communicate(timeout=HANG)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.out, self.err = out, err


@contextlib.contextmanager
def served(run: str | Path, *args: str, cwd: Path | None = None) -> Iterator[Served]:
    """``replay-tui serve RUN --port P ARGS`` running (P a free port),
    stopped with Ctrl-C on the way out."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay_tui", "serve", str(run), "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    server = Served(proc, port)
    try:
        wait_until(lambda: listening(port) or proc.poll() is not None)
        if proc.poll() is not None:
            server.stop()
            raise AssertionError(
                f"serve did not start (exit {proc.returncode}): {server.out}{server.err}"
            )
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def browser_page(width: int = 1400, height: int = 800) -> Iterator[Any]:
    """A Playwright page in headless Chromium that fetches nothing but
    127.0.0.1 (the page asks Google for a font: refused, it falls back)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.add_init_script(HOOK)
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith("http://127.0.0.1:")
                    else route.abort()
                ),
            )
            yield page
        finally:
            browser.close()


def screen_text(page: Any) -> str | None:
    """The terminal's rows in the page, as xterm.js holds them."""
    text: str | None = page.evaluate(SCREEN)
    return text


def wait_for_screen(page: Any, ready: Callable[[str], bool]) -> str:
    """The screen's text once ``ready`` says so; fails with the last screen seen."""
    seen: list[str | None] = [None]

    def shown() -> str | None:
        seen[0] = screen_text(page)
        return seen[0] if seen[0] is not None and ready(seen[0]) else None

    try:
        text = wait_until(shown, poll=0.2)
    except AssertionError:
        raise AssertionError(
            f"the page never showed what was awaited; its screen:\n{seen[0]}"
        ) from None
    assert isinstance(text, str)
    return text


def cursor_row(screen: str) -> str:
    """The timeline's row under the cursor (the one marked ``▶``)."""
    rows = [row for row in screen.splitlines() if row.lstrip(" │┃").startswith("▶")]
    assert len(rows) == 1, screen
    return rows[0]
