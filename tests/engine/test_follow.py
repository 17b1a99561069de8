"""Following a growing run: appends in odd chunks, late receipts, rewrites."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.replay import Replay
from replay_tui.engine.report import build_report, compare_reports
from replay_tui.formats.ledger import LedgerRewritten
from replay_tui.formats.run import RunPaths, locate_run
from replay_tui.reducers import load_reducer
from replay_tui.synth.runs import write_agent_run

RULES = load_reducer(None)


def _source(tmp: Path, n: int, seed: int) -> tuple[Path, bytes, dict[str, bytes]]:
    src = tmp / "src"
    write_agent_run(src, n, seed=seed)
    receipts = {p.name: p.read_bytes() for p in (src / "receipts").glob("*.json")}
    return src, (src / "events.jsonl").read_bytes(), receipts


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 120), lag=st.integers(0, 5))
def test_followed_run_equals_check_of_the_final_file(
    tmp_path_factory: pytest.TempPathFactory, seed: int, n: int, lag: int
) -> None:
    tmp = tmp_path_factory.mktemp("follow")
    src, data, receipts = _source(tmp, n, seed)
    live = tmp / "live"
    live.mkdir()
    shutil.copy(src / "budget.json", live / "budget.json")
    paths = RunPaths(live, live / "events.jsonl")
    followed = Replay(paths, RULES, following=True, checkpoint_every=7)
    assert followed.advance() == 0  # the ledger does not exist yet: wait for it
    rng = random.Random(seed)
    pos = 0
    waiting: list[tuple[int, str]] = []  # (chunk number when written, receipt name)
    chunk_no = 0
    seen_valid = [0]
    with open(live / "events.jsonl", "ab") as out:
        while pos < len(data):
            size = rng.randint(1, 200)
            piece = data[pos : pos + size]
            out.write(piece)
            out.flush()
            pos += len(piece)
            chunk_no += 1
            # receipts of finished calls are written `lag` chunks late
            for name in sorted(receipts):
                if (
                    f'"call_id":"{name[:-5]}"' in piece.decode(errors="ignore")
                    and (chunk_no, name) not in waiting
                ):
                    waiting.append((chunk_no + lag, name))
            for due, name in list(waiting):
                if due <= chunk_no:
                    (live / "receipts").mkdir(exist_ok=True)
                    (live / "receipts" / name).write_bytes(receipts[name])
                    waiting.remove((due, name))
                    followed.retry_pending()
            followed.ledger.check_unchanged()
            followed.advance()
            assert followed.error is None, followed.error
            assert followed.valid >= seen_valid[-1]  # history only grows
            seen_valid.append(followed.valid)
    for _, name in waiting:
        (live / "receipts").mkdir(exist_ok=True)
        (live / "receipts" / name).write_bytes(receipts[name])
    for name, raw in receipts.items():  # receipts written after the last event
        (live / "receipts").mkdir(exist_ok=True)
        if not (live / "receipts" / name).exists():
            (live / "receipts" / name).write_bytes(raw)
    followed.retry_pending()
    followed.advance()
    followed.finish()
    fresh = Replay(locate_run(live), RULES).verify()
    assert followed.valid == fresh.valid == n
    # (the same report, but for how each was made: followed, the Python
    # rules read it; checked, the built-in rules' native twin where built)
    assert compare_reports(build_report(followed), build_report(fresh)) == []
    assert followed.final_state() == fresh.final_state()


def test_pending_receipt_is_waited_for_then_strict_again(tmp_path: Path) -> None:
    src, data, _receipts = _source(tmp_path, 12, 1)
    live = tmp_path / "live"
    live.mkdir()
    (live / "events.jsonl").write_bytes(data)
    shutil.copy(src / "budget.json", live / "budget.json")
    followed = Replay(RunPaths(live, live / "events.jsonl"), RULES, following=True)
    followed.advance()
    assert followed.error is None and followed.pending is not None
    held = followed.pending
    assert followed.valid == held.seq - 1
    followed.finish()  # following stops: the missing receipt is an error now
    assert followed.error is not None and followed.error.code == "missing_receipt"
    assert followed.error.seq == held.seq


def _followed(tmp_path: Path) -> tuple[Replay, Path]:
    src, _data, _ = _source(tmp_path, 40, 2)
    events = src / "events.jsonl"
    replay = Replay(RunPaths(src, events), RULES, following=True)
    replay.advance()
    assert len(replay.ledger) == 40
    return replay, events


def test_shrink_is_a_rewrite(tmp_path: Path) -> None:
    replay, events = _followed(tmp_path)
    with open(events, "r+b") as fh:
        fh.truncate(events.stat().st_size - 10)
    with pytest.raises(LedgerRewritten, match="shrank"):
        replay.ledger.check_unchanged()


def test_a_replaced_file_is_a_rewrite_only_if_its_history_differs(tmp_path: Path) -> None:
    replay, events = _followed(tmp_path)
    data = events.read_bytes()
    tmp = events.with_suffix(".new")
    tmp.write_bytes(data + data[:50])  # the same history, grown (an atomic replace)
    os.replace(tmp, events)
    replay.ledger.check_unchanged()  # adopted: reading goes on in the new file
    changed = bytearray(data)
    changed[123] = ord("X") if changed[123] != ord("X") else ord("Y")
    tmp.write_bytes(bytes(changed))
    os.replace(tmp, events)
    with pytest.raises(LedgerRewritten, match="at byte 123: the file was replaced"):
        replay.ledger.check_unchanged()


@pytest.mark.parametrize("where", [0.0, 0.5, 0.999])
def test_in_place_rewrite_is_caught(tmp_path: Path, where: float) -> None:
    replay, events = _followed(tmp_path)
    size = events.stat().st_size
    at = min(int(size * where), size - 2)
    with open(events, "r+b") as fh:  # same inode, same size, one byte changed
        fh.seek(at)
        old = fh.read(1)
        fh.seek(at)
        fh.write(b"X" if old != b"X" else b"Y")
    with pytest.raises(LedgerRewritten):
        replay.ledger.verify_prefix()
