"""Every hostile input of tests/corpus gets its verdict, from check and from the app.

A verdict is an exit status (0 verified, 1 failed, 2 cannot run with one
line of reason) plus, for a failure, the code and where. Never a traceback,
never a raw control character on the terminal.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.core.errors import CannotRun
from replay_tui.ui.launch import make_app
from tests.corpus.make_corpus import CASES, CASES_DIR, HERE, Case, by_name
from tests.helpers.inert import assert_inert
from tests.helpers.screen import screen_text, seq_at_cursor, settle, status

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _ids(cases: list[Case]) -> list[str]:
    return [c.name for c in cases]


def _runnable(case: Case) -> Any:
    marks = []
    if case.needs_non_root and IS_ROOT:
        marks.append(pytest.mark.skip(reason="root reads anything: see test_permission_denied_*"))
    return pytest.param(case, id=case.name, marks=marks)


def build(case: Case, tmp_path: Path) -> Path:
    run = tmp_path / case.name
    case.build(run)
    return run


@pytest.mark.parametrize("case", [_runnable(c) for c in CASES])
def test_check_gives_the_verdict(
    case: Case, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    run = build(case, tmp_path)
    code = main(["check", str(run), "--json"])
    out, err = capsysbinary.readouterr()
    v = case.verdict
    assert code == v.exit, (out, err)
    if v.exit == 2:
        assert out == b""
        assert err.startswith(b"replay-tui: ") and err.count(b"\n") == 1
        assert_inert(err.decode())
        return
    report = orjson.loads(out)
    error = report["error"]
    if v.code is None:
        assert error is None
    else:
        assert error["code"] == v.code
        if v.seq is not None:
            assert error["seq"] == v.seq
        if v.line is not None:
            assert error["line"] == v.line
    # the human summary is escaped too
    assert main(["check", str(run)]) == v.exit
    human, err = capsysbinary.readouterr()
    assert_inert(human.decode() + err.decode())


@pytest.mark.parametrize("case", [_runnable(c) for c in CASES])
async def test_app_shows_the_verdict(case: Case, tmp_path: Path) -> None:
    run = build(case, tmp_path)
    v = case.verdict
    if v.exit == 2:
        with pytest.raises(CannotRun):
            make_app(str(run))
        return
    app = make_app(str(run))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        shown = screen_text(app)
        assert_inert(shown)
        if v.code is None:
            assert app.replay.error is None and "verified" in status(app)
            return
        error = app.replay.error
        assert error is not None and error.code == v.code
        where = (
            f"seq {error.seq}"
            if error.seq is not None
            else (f"line {error.line}" if error.line is not None else "start")
        )
        assert f"error at {where}: {v.code}" in status(app)
        if v.seq is not None:
            assert seq_at_cursor(app) == v.seq  # the app lands on the failing event
        await pilot.press("j", "k", "d", "x")  # the panes at the failure stay inert too
        await settle(app, pilot)
        assert_inert(screen_text(app))


def test_whole_corpus_in_one_batch(tmp_path: Path) -> None:
    """The real command, several runs in parallel: one JSON line each, no traceback."""
    cases = [c for c in CASES if not (c.needs_non_root and IS_ROOT)]
    runs = [str(build(c, tmp_path)) for c in cases]
    out = subprocess.run(
        [sys.executable, "-m", "replay_tui", "check", *runs, "--json", "--jobs", "2"],
        capture_output=True,
        timeout=300,
    )
    assert out.returncode == 2  # some cases cannot be checked at all
    assert b"Traceback" not in out.stderr
    lines = [orjson.loads(x) for x in out.stdout.splitlines()]
    assert [x["exit"] for x in lines] == [c.verdict.exit for c in cases]


def test_committed_cases_match_their_definitions(tmp_path: Path) -> None:
    """tests/corpus/cases/ is what make_corpus.py writes (rerun it after a change)."""
    verdicts = orjson.loads((HERE / "verdicts.json").read_bytes())
    assert set(verdicts) == set(by_name())
    for case in CASES:
        if not case.committed:
            continue
        built = build(case, tmp_path)
        committed = CASES_DIR / case.name
        files = sorted(p.relative_to(built) for p in built.rglob("*") if p.is_file())
        assert files == sorted(
            p.relative_to(committed) for p in committed.rglob("*") if p.is_file()
        )
        for rel in files:
            assert (built / rel).read_bytes() == (committed / rel).read_bytes(), rel


@pytest.fixture
def deny(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make one path unreadable, as permissions would for a non-root user."""

    def apply(target: str) -> None:
        real_open = os.open

        def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if os.fspath(path).endswith(target):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", fake_open)

    return apply


def test_permission_denied_ledger(
    tmp_path: Path, deny: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    run = build(by_name()["valid"], tmp_path)
    deny("events.jsonl")
    assert main(["check", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Permission denied" in err


def test_permission_denied_receipt(
    tmp_path: Path, deny: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    run = build(by_name()["valid"], tmp_path)
    deny("c1.json")
    assert main(["check", str(run)]) == 1
    out = capsys.readouterr().out
    assert "missing_receipt" in out and "Permission denied" in out
