"""Compressed ledgers, as support receives them: events.jsonl.gz."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from replay_tui.core.errors import CannotRun
from replay_tui.ui.launch import make_app
from tests.conftest import DEMO
from tests.helpers.screen import settle, status


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replay_tui", *args], capture_output=True, text=True, timeout=120
    )


def _gz_run(tmp_path: Path, name: str = "events.jsonl.gz") -> Path:
    run = tmp_path / "gz-run"
    shutil.copytree(DEMO, run)
    raw = (run / "events.jsonl").read_bytes()
    (run / "events.jsonl").unlink()
    (run / name).write_bytes(gzip.compress(raw))
    return run


def test_a_run_folder_with_a_gzipped_ledger_checks_as_the_plain_one(tmp_path: Path) -> None:
    run = _gz_run(tmp_path)
    plain = orjson.loads(_cli("check", "--json", str(DEMO)).stdout)
    out = _cli("check", "--json", str(run))
    assert out.returncode == 0, out.stderr
    report = orjson.loads(out.stdout)
    assert report.pop("compressed") == "gzip"  # the report says where it came from
    assert report == plain  # events_sha256 is that of the decompressed ledger
    assert (
        report["events_sha256"] == hashlib.sha256((DEMO / "events.jsonl").read_bytes()).hexdigest()
    )
    state = _cli("state", str(run), "--at", "3")
    assert state.returncode == 0 and b"call-001" in state.stdout.encode()


def test_a_gz_file_given_as_the_run_names_itself_in_errors(tmp_path: Path) -> None:
    run = _gz_run(tmp_path, "prod-7731.jsonl.gz")
    lines = gzip.decompress((run / "prod-7731.jsonl.gz").read_bytes()).splitlines(keepends=True)
    lines[4] = lines[4].replace(b"tool_started", b"tool_finished")
    (run / "prod-7731.jsonl.gz").write_bytes(gzip.compress(b"".join(lines)))
    out = _cli("check", "--json", str(run / "prod-7731.jsonl.gz"))
    assert out.returncode == 1
    assert orjson.loads(out.stdout)["error"]["artifact"] == "prod-7731.jsonl.gz:5"


def test_gzip_bytes_under_another_name_get_a_hint(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(DEMO, run)
    (run / "events.jsonl").write_bytes(gzip.compress((DEMO / "events.jsonl").read_bytes()))
    out = _cli("check", str(run))
    assert out.returncode == 1
    assert "bad_encoding" in out.stdout and "gzip-compressed" in out.stdout


def test_a_damaged_gzip_file_is_one_line(tmp_path: Path) -> None:
    run = _gz_run(tmp_path)
    data = (run / "events.jsonl.gz").read_bytes()
    (run / "events.jsonl.gz").write_bytes(data[: len(data) // 2])
    out = _cli("check", str(run))
    assert out.returncode == 2 and "not a readable gzip file" in out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def test_following_a_compressed_ledger_is_refused(tmp_path: Path) -> None:
    run = _gz_run(tmp_path)
    with pytest.raises(CannotRun, match="compressed"):
        make_app(run, follow=True)


async def test_the_app_opens_a_gzipped_run(tmp_path: Path) -> None:
    app = make_app(_gz_run(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert "verified" in status(app) and "seq 1 of 14" in status(app)
