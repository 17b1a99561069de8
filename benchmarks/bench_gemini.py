"""``check`` of a large Gemini CLI session against an events.jsonl of the same size.

    python benchmarks/bench_gemini.py [--mb 100] [--repeat 3]

Writes (deterministically) a Gemini CLI session of about --mb MB from a real
one (``tests/fixtures/gemini-sessions/failing-tools.jsonl``, written by
Gemini CLI 0.61): its metadata and first snapshot once, then its turn (a
prompt, four tool calls with their results, each reply written twice as
Gemini CLI writes it, ``$set`` lines) repeated with fresh message and call
ids, so every message stays loaded: the state holds the whole conversation,
as Gemini CLI's loader does for a session never compressed. The baseline, in
the same run, is a generated agent run (``synth/runs``) whose events.jsonl
has about the same bytes.

Prints, for both: bytes, lines, seconds and peak RSS (whole process, median
of --repeat) of ``check`` and of opening them as the app does (every state
kept, to step through), per MB and per line, and the ratios.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import median_run  # noqa: E402
from benchmarks.bench_sessions import ledger  # noqa: E402

PY = sys.executable
#: Open and verify as the app does (every state kept: ``history``).
APP_OPEN = (
    "import sys\n"
    "from replay_tui.engine.open import open_replay\n"
    "replay, _ = open_replay(sys.argv[1], history=True)\n"
    "replay.verify()\n"
    "print('verified' if replay.error is None else replay.error)\n"
)
SOURCE = ROOT / "tests" / "fixtures" / "gemini-sessions" / "failing-tools.jsonl"
_UUID = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{12}")
_CALL = re.compile(rb"(__[a-z_]+_)(\d{13})(_\d+)")


def session(dest: Path, mb: float) -> tuple[int, int]:
    """Write the session; (bytes, lines)."""
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    head, turn = b"".join(lines[:2]), b"".join(lines[2:])
    want = int(mb * 1_000_000)
    reps = max(1, round((want - len(head)) / len(turn)))
    written = len(head)
    with dest.open("wb") as out:
        out.write(head)
        for rep in range(reps):
            tag = f"{rep:012x}".encode()
            stamp = f"{rep:013d}".encode()

            def fresh_uuid(m: re.Match[bytes], tag: bytes = tag) -> bytes:
                return m.group(1) + tag

            def fresh_call(m: re.Match[bytes], stamp: bytes = stamp) -> bytes:
                return m.group(1) + stamp + m.group(3)

            chunk = _CALL.sub(fresh_call, _UUID.sub(fresh_uuid, turn))
            out.write(chunk)
            written += len(chunk)
    return written, 2 + reps * len(lines[2:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100.0, help="size of each source, in MB")
    ap.add_argument("--repeat", type=int, default=3, help="check runs per source (median)")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="replay-bench-gemini-"))
    work.mkdir(parents=True, exist_ok=True)
    chat = work / "session-bench.jsonl"
    s_bytes, s_lines = session(chat, args.mb)
    run = work / "run"
    l_bytes, l_lines = ledger(run, s_bytes)
    rows = []
    for name, target, size, lines in (
        ("events.jsonl", run, l_bytes, l_lines),
        ("gemini session", chat, s_bytes, s_lines),
        ("events.jsonl, app", run, l_bytes, l_lines),
        ("gemini session, app", chat, s_bytes, s_lines),
    ):
        cmd = [PY, "-m", "replay_tui", "check", str(target)]
        if name.endswith(", app"):  # as the app opens it: every state kept (history)
            cmd = [PY, "-c", APP_OPEN, str(target)]
        seconds, rss, out = median_run(cmd, args.repeat)
        verdict = out.splitlines()[0] if out else "?"
        assert ": verified:" in verdict or verdict == "verified", verdict
        rows.append((name, size, lines, seconds, rss))
    print(f"{args.mb:g} MB each (median of {args.repeat} runs), in {work}")
    head = ("MB", 7), ("lines", 9), ("seconds", 8), ("s/100MB", 8), ("µs/line", 8), ("RSS MiB", 8)
    print(f"{'source':<20} " + " ".join(f"{name:>{width}}" for name, width in head))
    for name, size, lines, seconds, rss in rows:
        print(
            f"{name:<20} {size / 1e6:7.1f} {lines:9,} {seconds:8.2f} "
            f"{seconds / size * 1e8:8.2f} {seconds / lines * 1e6:8.1f} {rss:8.0f}"
        )
    (_, lb, ll, ls, _), (_, sb, sl, ss, _), (_, _, _, la, _), (_, _, _, sa, _) = rows
    print(
        f"session / ledger: check {ss / ls:.2f}x for the same bytes "
        f"({(ss / sb) / (ls / lb):.2f}x per MB, {(ss / sl) / (ls / ll):.2f}x per line); "
        f"opened as the app does {sa / la:.2f}x"
    )


if __name__ == "__main__":
    main()
