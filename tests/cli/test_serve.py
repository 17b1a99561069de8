"""``replay-tui serve``: the command each browser tab runs (every flag of the
app passed on, every argument quoted), where it listens and what it says,
and the app in headless Chromium as a person uses it."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from replay_tui.cli import main
from replay_tui.cli.commands import build_parser
from replay_tui.cli.serve import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    INSTALL,
    app_argv,
    app_command,
    app_parser,
    exposure_warning,
)
from replay_tui.core.net import is_loopback
from tests.conftest import DEMO, ROOT
from tests.helpers.browser import (
    CHROMIUM,
    browser_page,
    cursor_row,
    free_port,
    served,
    wait_for_screen,
)
from tests.helpers.waiting import wait_until


def serve_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", *argv])


def as_open(args: argparse.Namespace) -> dict[str, object]:
    """What ``open`` makes of the command line built for the app."""
    return vars(app_parser().parse_args(app_argv(args)))


def open_fields(args: argparse.Namespace) -> dict[str, object]:
    return {k: v for k, v in vars(args).items() if k not in ("host", "port", "func", "command")}


# -- the command each browser tab runs -------------------------------------------------


def test_every_flag_of_the_app_is_taken_and_passed_on() -> None:
    args = serve_args(
        "runs/r1@3",
        "--reducer",
        "rules.py:R",
        "--rules-timeout",
        "2.5",
        "--format",
        "jsonl",
        "--against",
        "runs/r2",
        "--rules-b",
        "agent_run",
        "--skip",
        "2",
        "--skip",
        "5",
        "--strict-events",
        "--follow",
        "--watch-rules",
        "--host",
        "0.0.0.0",
        "--port",
        "9001",
    )
    assert as_open(args) == open_fields(args)
    argv = app_argv(args)
    assert argv[-2:] == ["--", "runs/r1@3"]
    assert "--host" not in " ".join(argv) and "9001" not in argv


def test_serve_takes_every_option_open_takes() -> None:
    """By construction (one function adds them to both), and so it stays."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    flags = {
        name: {o for a in sub.choices[name]._actions for o in a.option_strings}
        for name in ("open", "serve")
    }
    assert flags["serve"] - flags["open"] == {"--host", "--port"}
    assert flags["open"] <= flags["serve"]


def test_defaults_are_left_to_the_app() -> None:
    args = serve_args(str(DEMO))
    assert app_argv(args) == ["--", str(DEMO)]
    assert (args.host, args.port) == (DEFAULT_HOST, DEFAULT_PORT) == ("127.0.0.1", 8000)
    assert app_argv(serve_args()) == []  # the bundled demo, as `replay-tui` alone


def test_values_that_look_like_flags_stay_values() -> None:
    args = serve_args("--against=-b", "--", "-run")
    assert app_argv(args) == ["--against=-b", "--", "-run"]
    assert as_open(args) == open_fields(args)


def test_the_command_is_this_python_on_open_every_argument_quoted() -> None:
    run = "my runs/a; touch pwned $(id) `id` 'q' \"dq\" & |"
    args = serve_args(run, "--at", "4")
    command = app_command(args)
    assert shlex.split(command) == [sys.executable, "-m", "replay_tui", "open", "--at=4", "--", run]
    assert command.startswith(shlex.quote(sys.executable) + " -m replay_tui open ")


def test_a_run_path_of_shell_characters_reaches_the_app_whole(tmp_path: Path) -> None:
    """The command as textual-serve runs it (through /bin/sh): the app gets
    the path intact (it finds the run, then wants a terminal) and no word of
    it runs."""
    run = tmp_path / "a run; touch pwned $(touch pwned2) `touch pwned3`"
    shutil.copytree(DEMO, run)
    command = app_command(serve_args(str(run), "--at", "3"))
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_DRIVER"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        command,
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert "the app needs a terminal" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [run.name]


# -- where it listens and what it says --------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("LocalHost", True),
        ("[::1]", True),
        ("127.3.4.5", True),
        ("0.0.0.0", False),
        ("127.0.0.1.rebound.example", False),
        ("127.evil.example", False),
        ("192.168.1.10", False),
    ],
)
def test_what_only_this_machine_reaches(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_no_warning_on_a_loopback_address(host: str) -> None:
    assert exposure_warning(host, 8000, "demo-001") is None


@pytest.mark.parametrize(
    ("host", "where"),
    [
        ("0.0.0.0", "every address of this machine, port 8000"),
        ("::", "every address of this machine, port 8000"),
        ("192.0.2.7", "192.0.2.7:8000"),
        ("2001:db8::1", "[2001:db8::1]:8000"),
    ],
)
def test_another_host_is_warned_about(host: str, where: str) -> None:
    warning = exposure_warning(host, 8000, "demo-001")
    assert warning is not None
    assert warning.startswith(f"warning: listening on {where}: anyone who can reach it can read ")
    assert "demo-001 (its events, receipts and state" in warning


def test_a_missing_run_is_refused_before_serving(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "no/such/run", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err == "replay-tui: no/such/run: no such file or folder\n"


def test_flags_the_app_refuses_are_refused_here(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", f"{DEMO}@3", "--at", "5"]) == 2
    assert "name two seqs" in capsys.readouterr().err
    assert main(["serve", str(DEMO), "--watch-rules"]) == 2
    assert "--watch-rules needs --reducer" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_bad_port_is_one_line(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", str(DEMO), "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.startswith("replay-tui: argument --port: ") and err.count("\n") == 1


def test_a_port_in_use_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", str(DEMO), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"replay-tui: 127.0.0.1:{port}: the port is in use (another server?): "
        "pick another with --port N\n"
    )


def test_without_textual_serve_it_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    monkeypatch.delitem(sys.modules, "replay_tui.ui.serve", raising=False)
    assert main(["serve", str(DEMO)]) == 2
    assert capsys.readouterr().err == f"replay-tui: {INSTALL}\n"
    assert INSTALL == "serve needs textual-serve: pip install 'replay-tui[serve]'"


def test_it_says_where_and_stops_on_ctrl_c() -> None:
    with served(DEMO) as server:
        pass
    assert server.proc.returncode == 0, server.err
    assert server.out.startswith(
        f"replay-tui serve: demo-001 at http://127.0.0.1:{server.port}\n"
        "  open it in a browser: each tab runs its own app; Ctrl-C stops\n"
    )
    assert server.out.endswith("replay-tui serve: stopped\n")
    assert server.err == "" and "Traceback" not in server.out


def test_another_host_warns_on_start() -> None:
    with served(DEMO, "--host", "0.0.0.0") as server:
        pass
    assert server.proc.returncode == 0, server.err
    assert server.err == (
        f"replay-tui serve: warning: listening on every address of this machine, port "
        f"{server.port}: anyone who can reach it can read demo-001 (its events, receipts "
        "and state, secrets in them too: r reveals masked values) and drive the app\n"
    )
    assert f"demo-001 at http://127.0.0.1:{server.port} (or this machine's address)" in server.out


def get(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_only_its_own_page_on_loopback_names_opens_the_app() -> None:
    """A web page elsewhere cannot open the app's websocket (Origin), nor can
    a DNS name rebound to 127.0.0.1 (Host)."""
    ws = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    with served(DEMO) as server:
        status, page = get(server.url)
        assert status == 200
        assert f'data-session-websocket-url="ws://127.0.0.1:{server.port}/ws"' in page
        assert "<h1>replay-tui demo-001</h1>" in page and "Starting the app" in page
        assert "https://" not in page  # nothing fetched from elsewhere (no web font)
        status, page = get(server.url, Host=f"localhost:{server.port}")
        assert f'data-session-websocket-url="ws://localhost:{server.port}/ws"' in page
        status, body = get(server.url, Host=f"rebound.example:{server.port}")
        assert status == 403 and "answers 127.0.0.1 and localhost" in body
        status, body = get(server.url + "ws", Origin="http://elsewhere.example", **ws)
        assert (status, body) == (
            403,
            "replay-tui serve: the app opens only from this server's own page\n",
        )
    assert "opened the app" not in server.err


# -- in a browser, as a person -----------------------------------------------------------


def need_browser() -> None:
    """Headless Chromium and Playwright: CI installs both (.ci/run, the test
    extra) and must not skip; elsewhere a missing one skips, saying which."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install -e '.[test]')")
    if missing and not os.environ.get("CI"):
        pytest.skip(f"the browser test needs {' and '.join(missing)}")
    assert not missing, f"CI must have {missing}"


def test_in_a_browser_the_app_draws_and_keys_work_at_once(tmp_path: Path) -> None:
    """A person opens the page and types: no click first, and nothing here
    focuses the terminal (the page gives it the keyboard itself)."""
    need_browser()
    with served(DEMO) as server, browser_page() as page:
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto(server.url, wait_until="domcontentloaded")
        # the card says what is happening; the app draws with no click
        assert "Starting the app" in page.inner_text("body")
        screen = wait_for_screen(page, lambda s: "✓ verified" in s and "tool_allowed" in s)
        assert asked and all(url.startswith(server.url.rstrip("/")) for url in asked), asked
        status = screen.splitlines()[0]
        assert "demo-001" in status and "seq 1 of 14" in status
        assert "run_started" in cursor_row(screen)
        assert "-first-byte" in page.evaluate("document.body.className")
        before = page.screenshot()
        page.keyboard.press("j")
        screen = wait_for_screen(page, lambda s: "seq 2 of 14" in s)
        assert "attempt_started" in cursor_row(screen) and " 2 " in cursor_row(screen)
        page.keyboard.press("End")
        screen = wait_for_screen(page, lambda s: "seq 14 of 14" in s)
        assert "tool_allowed" in cursor_row(screen)
        after = page.screenshot(path=str(tmp_path / "serve-browser.png"))
        assert after != before
        apps = descendants(server.proc.pid)
        assert apps, "no app process for the tab"
        server.stop()  # Ctrl-C with the tab still open
        assert server.proc.returncode == 0, server.err
        wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in apps))
        wait_for_screen(page, lambda s: True)  # the page is still there, the app gone
        assert "-closed" in page.evaluate("document.body.className")
    assert "opened the app" in server.err and "Traceback" not in server.out + server.err


def test_in_a_browser_keys_work_again_when_the_person_comes_back() -> None:
    """Another tab in front, then this one again: keys still reach the app,
    with no click."""
    need_browser()
    with served(DEMO) as server, browser_page() as page:
        page.goto(server.url, wait_until="domcontentloaded")
        wait_for_screen(page, lambda s: "✓ verified" in s and "seq 1 of 14" in s)
        browser = page.context.browser
        assert browser is not None
        other = browser.new_page()
        other.goto(server.url + "no-such-page")
        other.bring_to_front()
        page.bring_to_front()
        page.keyboard.press("G")
        screen = wait_for_screen(page, lambda s: "seq 14 of 14" in s)
        assert "tool_allowed" in cursor_row(screen)


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (Linux /proc): the tab's app and its shell."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        for child in (task / "children").read_text().split():
            found += [int(child), *descendants(int(child))]
    return found
