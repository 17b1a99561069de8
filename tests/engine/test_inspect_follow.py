"""An Inspect AI sample followed while its eval runs: the log is rewritten
(the sample's member added when it completes; a .json log written whole at
the end), and the followed replay ends as a cold open of the finished log."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from tests.conftest import TESTS

LOGS = TESTS / "fixtures" / "inspect-logs" / "generated"
RULES = load_reducer("inspect_ai")


def _without(src: Path, dst: Path, member: str) -> None:
    """``src`` as it was before ``member`` was written: every other member."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            if name != member and name not in ("header.json", "summaries.json"):
                new.writestr(name, _member(src, name))


def _member(path: Path, name: str) -> bytes:
    from replay_tui.formats.inspect.archive import Archive

    archive = Archive(path)
    try:
        return archive.read(name)
    finally:
        archive.close()


def _rewrite(live: Path, finished: Path) -> None:
    """The log rewritten whole, as Inspect does (a new file put in place)."""
    fresh = live.with_suffix(".tmp")
    fresh.write_bytes(finished.read_bytes())
    os.replace(fresh, live)


@pytest.mark.parametrize(
    ("log", "sample"), [("failing.eval", "boom"), ("calculator.eval", "single:2")]
)
def test_a_sample_followed_until_written_ends_as_a_cold_open(
    log: str, sample: str, tmp_path: Path
) -> None:
    finished = LOGS / log
    live = tmp_path / log
    key = sample if ":" in sample else f"{sample}:1"
    member = f"samples/{key.replace(':', '_epoch_')}.json"
    _without(finished, live, member)
    followed = Replay(locate_run(f"{live}#{sample}"), RULES, following=True, history=True)
    try:
        assert followed.advance() == 0  # the sample is not in the log yet: waited for
        assert followed.error is None and followed.valid == 0
        _rewrite(live, finished)
        followed.advance()
        followed.finish()
        assert followed.error is None, followed.error
        cold, _ = open_replay(f"{finished}#{sample}")
        try:
            cold.verify()
            assert followed.valid == cold.valid > 0
            assert followed.final_state() == cold.final_state()
            assert followed.ledger.sha256() == cold.ledger.sha256()
        finally:
            cold.close()
    finally:
        followed.close()


def test_a_json_log_followed_from_before_it_is_complete(tmp_path: Path) -> None:
    finished = LOGS / "notebook.json"
    live = tmp_path / "notebook.json"
    data = finished.read_bytes()
    live.write_bytes(data[: len(data) // 3])  # written, not yet whole
    followed = Replay(locate_run(f"{live}#2", fmt="inspect"), RULES, following=True, history=True)
    try:
        assert followed.advance() == 0
        _rewrite(live, finished)
        followed.advance()
        followed.finish()
        assert followed.error is None, followed.error
        cold, _ = open_replay(f"{finished}#2")
        try:
            cold.verify()
            assert followed.final_state() == cold.final_state()
        finally:
            cold.close()
    finally:
        followed.close()
