"""``check`` of a large Claude Code session against an events.jsonl of the same size.

    python benchmarks/bench_sessions.py [--mb 100] [--repeat 3] [--source FILE]

Generates (deterministically) a Claude Code transcript of about --mb MB:
by default with ``replay_tui.synth.sessions``, as many turns as
make the size, every record with fresh uuids and ids; with ``--source FILE``
by repeating a real session's records (such as the test fixture with a
compaction, ``tests/fixtures/agent-sessions/claude-code/
codemie--session-624a4a58.jsonl``, Claude Code 2.0.76): each repetition
gets fresh uuids, session id, tool_use ids and message ids (the last
characters of each changed, in the raw bytes, so every record stays as
Claude Code wrote it) and its timestamps moved a day on. The baseline, in
the same run, is a generated agent run (``synth/runs``) whose
events.jsonl has about the same bytes.

Prints, for both: bytes, lines, ``check`` seconds and peak RSS (whole
process, median of --repeat), per MB and per line, and the ratio.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import median_run  # noqa: E402

PY = sys.executable
_UUID = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}")
_IDS = re.compile(rb"\b((?:toolu|msg|req)_[A-Za-z0-9_]+)")
_DAY = re.compile(rb'("timestamp":\s*")(\d{4}-\d{2}-\d{2})')


def session(dest: Path, source: Path, mb: float) -> tuple[int, int]:
    """Write the repeated session; (bytes, lines)."""
    data = source.read_bytes()
    want = int(mb * 1_000_000)
    reps = max(1, round(want / len(data)))
    written = lines = 0
    with dest.open("wb") as out:
        for rep in range(reps):
            tag = f"{rep:012x}".encode()
            short = f"r{rep}".encode()

            def fresh_uuid(m: re.Match[bytes], tag: bytes = tag) -> bytes:
                return m.group(1) + tag

            def fresh_id(m: re.Match[bytes], short: bytes = short) -> bytes:
                return m.group(1) + b"_" + short

            def later(m: re.Match[bytes], rep: int = rep) -> bytes:
                day = date.fromisoformat(m.group(2).decode()) + timedelta(days=rep)
                return m.group(1) + day.isoformat().encode()

            chunk = _DAY.sub(later, _IDS.sub(fresh_id, _UUID.sub(fresh_uuid, data)))
            out.write(chunk)
            written += len(chunk)
            lines += chunk.count(b"\n")
    return written, lines


def synthetic(dest: Path, mb: float) -> tuple[int, int]:
    """Write a generated session of about ``mb`` MB as ``dest``; (bytes, lines)."""
    from replay_tui.synth.sessions import write_claude_code_session

    probe = write_claude_code_session(dest.parent / "probe-session", 50, seed=1)
    turns = max(1, round(mb * 1_000_000 / (probe["bytes"] / 50)))
    facts = write_claude_code_session(dest.parent, turns, seed=1, name=dest.stem)
    return facts["bytes"], facts["lines"]


def ledger(dest: Path, size: int) -> tuple[int, int]:
    """An agent run whose events.jsonl has about ``size`` bytes; (bytes, lines)."""
    from replay_tui.synth.runs import write_agent_run

    probe = dest.parent / "probe"
    write_agent_run(probe, 20_000, seed=1)
    per_event = (probe / "events.jsonl").stat().st_size / 20_000
    write_agent_run(dest, round(size / per_event), seed=1)
    events = dest / "events.jsonl"
    return events.stat().st_size, events.read_bytes().count(b"\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100.0, help="size of each source, in MB")
    ap.add_argument("--repeat", type=int, default=3, help="check runs per source (median)")
    ap.add_argument(
        "--source",
        type=Path,
        default=None,
        help="a Claude Code session to repeat (default: a generated one, no fixture needed)",
    )
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="replay-bench-sessions-"))
    work.mkdir(parents=True, exist_ok=True)
    transcript = work / "session.jsonl"
    if args.source is None:
        s_bytes, s_lines = synthetic(transcript, args.mb)
    else:
        s_bytes, s_lines = session(transcript, args.source, args.mb)
    run = work / "run"
    l_bytes, l_lines = ledger(run, s_bytes)
    rows = []
    for name, target, size, lines in (
        ("events.jsonl", run, l_bytes, l_lines),
        ("claude-code session", transcript, s_bytes, s_lines),
    ):
        seconds, rss, out = median_run([PY, "-m", "replay_tui", "check", str(target)], args.repeat)
        verdict = out.splitlines()[0] if out else "?"
        assert ": verified:" in verdict, verdict
        rows.append((name, size, lines, seconds, rss))
    print(f"{args.mb:g} MB each (median of {args.repeat} check runs), in {work}")
    head = ("MB", 7), ("lines", 9), ("check s", 8), ("s/100MB", 8), ("µs/line", 8), ("RSS MiB", 8)
    print(f"{'source':<20} " + " ".join(f"{name:>{width}}" for name, width in head))
    for name, size, lines, seconds, rss in rows:
        print(
            f"{name:<20} {size / 1e6:7.1f} {lines:9,} {seconds:8.2f} "
            f"{seconds / size * 1e8:8.2f} {seconds / lines * 1e6:8.1f} {rss:8.0f}"
        )
    (_, lb, ll, ls, _), (_, sb, sl, ss, _) = rows
    print(
        f"session / ledger: check {ss / ls:.2f}x for the same bytes "
        f"({(ss / sb) / (ls / lb):.2f}x per MB, {(ss / sl) / (ls / ll):.2f}x per line)"
    )


if __name__ == "__main__":
    main()
