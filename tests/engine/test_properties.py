"""Properties over generated runs: prefixes, checkpoints, diffs, corruption."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.replay import Replay
from replay_tui.engine.report import build_report
from replay_tui.formats.envelope import ts_seconds
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.state.diff import MISSING, Change
from replay_tui.synth.runs import write_agent_run

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


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(None)
    ),
    st.integers(-23 * 60 - 59, 23 * 60 + 59),
    st.sampled_from(["T", "t", " "]),
    st.booleans(),
)
@settings(max_examples=400, deadline=None)
def test_ts_seconds_agrees_with_datetime(
    moment: datetime, offset_min: int, sep: str, zulu: bool
) -> None:
    """Every RFC 3339 time means the instant datetime says it does, so
    ts_backwards warnings fire exactly when time really went back."""
    tz = UTC if zulu else timezone(timedelta(minutes=offset_min))
    aware = moment.replace(tzinfo=tz)
    text = aware.isoformat(sep=sep)
    if zulu:
        text = text.replace("+00:00", "Z")
    got = ts_seconds(text)
    assert got is not None
    assert abs(got - aware.timestamp()) < 1e-6


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-30T00:00:00Z",  # no such day
        "2026-01-01T24:00:00Z",
        "2026-01-01T00:60:00Z",
        "2026-01-01T00:00:61Z",
        "2026-01-01T00:00:00+00:60",  # RFC 3339: offset minutes are 00-59
        "2026-01-01T00:00:00",  # no offset
        "2026-01-01T00:00:00.Z",
        "2026-01-01T00:00:00\uff10Z",  # a fullwidth digit is not a digit here
        "2026-01-01T00:00:00Z\n",
        "2026-01-01T0\u0669:00:00Z",  # an Arabic-Indic nine is not an hour digit
        "2026-01-01T09:00:00.\u0665Z",
    ],
)
def test_ts_seconds_refuses_what_is_not_rfc3339(text: str) -> None:
    assert ts_seconds(text) is None
    ts_seconds(text[:17] + "00Z")  # its minute seen before: still refused
    assert ts_seconds(text) is None


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(None)
    ),
    st.sampled_from(["", ".5", ".197", ".123456", ".1234567891"]),
)
@settings(max_examples=300, deadline=None)
def test_ts_seconds_in_a_minute_seen_before_is_the_same_to_the_last_bit(
    moment: datetime, frac: str
) -> None:
    """The next times of a minute are read by slicing: the same float as the
    full reading, so no duration or report moves by a bit."""
    from replay_tui.formats import envelope

    text = moment.replace(microsecond=0).isoformat(sep="T") + frac + "Z"
    envelope._MINUTE_SECONDS.clear()
    first = ts_seconds(text)
    assert text[:17] in envelope._MINUTE_SECONDS or moment.second == 60
    assert ts_seconds(text) == first and first is not None


def test_leap_second_counts_as_the_second_before() -> None:
    assert ts_seconds("2016-12-31T23:59:60Z") == ts_seconds("2016-12-31T23:59:59Z")
