"""Properties over generated runs: prefixes, checkpoints, diffs, corruption."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.diff import MISSING, Change
from replay_tui.reducers import load_reducer
from replay_tui.replay import Replay
from replay_tui.report import build_report
from replay_tui.run import locate_run
from replay_tui.synth import write_agent_run

RULES = load_reducer(None)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _copy_run(src: Path, dest: Path, events: bytes) -> Path:
    dest.mkdir()
    if (src / "receipts").is_dir():
        shutil.copytree(src / "receipts", dest / "receipts")
    if (src / "budget.json").exists():
        shutil.copy(src / "budget.json", dest / "budget.json")
    (dest / "events.jsonl").write_bytes(events)
    return dest


def _apply(state: Any, change: Change) -> Any:
    *parents, last = change.path
    node = state
    for p in parents:
        node = node[p]
    if change.new is MISSING:
        if isinstance(node, list):
            node.pop(last)
        else:
            del node[last]
    elif isinstance(node, list) and last == len(node):
        node.append(change.new)
    else:
        node[last] = change.new
    return state


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60), every=st.integers(1, 9))
def test_state_at_every_prefix_equals_a_fresh_replay(seed: int, n: int, every: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = root / "full"
        write_agent_run(run, n, seed=seed)
        replay = Replay(locate_run(run), RULES, checkpoint_every=every).verify()
        assert replay.error is None, replay.error
        lines = (run / "events.jsonl").read_bytes().splitlines(keepends=True)
        for k in range(n + 1):
            fresh = Replay(locate_run(_copy_run(run, root / f"p{k}", b"".join(lines[:k]))), RULES)
            fresh.verify()
            assert fresh.error is None
            assert replay.state_at(k) == fresh.final_state()
            if k:
                step = replay.step(k)
                rebuilt = _apply(step.before, step.changes[0]) if step.changes else step.before
                for change in step.changes[1:]:
                    rebuilt = _apply(rebuilt, change)
                assert rebuilt == replay.state_at(k)


CORRUPTIONS = ("delete", "duplicate", "swap", "cut", "flip")


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(3, 40),
    how=st.sampled_from(CORRUPTIONS),
    where=st.floats(0, 1, exclude_max=True),
    byte=st.integers(1, 255),
)
def test_one_corrupted_line_is_never_the_original_history(
    seed: int, n: int, how: str, where: float, byte: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = root / "orig"
        write_agent_run(run, n, seed=seed)
        original = build_report(Replay(locate_run(run), RULES).verify())
        lines = (run / "events.jsonl").read_bytes().splitlines(keepends=True)
        i = int(where * len(lines))
        if how == "delete":
            del lines[i]
        elif how == "duplicate":
            lines.insert(i, lines[i])
        elif how == "swap":
            i = min(i, len(lines) - 2)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif how == "cut":
            body = lines[i].rstrip(b"\n")
            lines[i] = body[: int(where * len(body))] + (b"\n" if byte % 2 else b"")
        else:
            body = bytearray(lines[i])
            pos = int(where * (len(body) - 1))  # never the newline
            body[pos] ^= byte
            lines[i] = bytes(body)
        bad = Replay(locate_run(_copy_run(run, root / "bad", b"".join(lines))), RULES).verify()
        report = build_report(bad)
        assert report != original
        assert report["events_sha256"] != original["events_sha256"]
        structural = how in ("duplicate", "swap", "cut") or (how == "delete" and i < n - 1)
        if structural:
            assert report["error"] is not None, (how, i)
        if report["error"] is None:
            # accepted only as a different history: fewer events or another state
            assert (report["events"], report["state_sha256"]) != (
                original["events"],
                original["state_sha256"],
            ) or how == "flip"
