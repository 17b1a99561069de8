"""Key press to screen, in a real terminal: the app runs in tmux, keys go in
with ``tmux send-keys`` and the screen is read back with ``tmux capture-pane``.

    python benchmarks/bench_keys.py RUN [RUN ...] [--steps 30] [--jumps 15] [--json OUT]

For each run the app is started in a detached tmux session (140x40, a session
name unique to this process) and timed as a person would see it:

- first screen: from starting the session to the state pane showing the header
  of seq 1 ("seq 1 · KIND  prefix 1..1 → WORD"; in a run with an error the app
  may open at the failing seq instead: the first header of any seq counts);
- validation: from starting the session to the status line saying
  "✓ verified" or "✗ error at ...";
- ``j``: after a jump to the middle of the run, one step at a time, from
  send-keys returning to the first capture in which the state pane header
  shows the next seq (p50 / p90 / max);
- ``:``: go-to-seq to random seqs (fixed seed): the prompt is opened and the
  digits typed first (waiting for both to show); timed is the Enter, until
  the header shows that seq (p50 / p90);
- End: from the first row to the header showing the last seq;
- peak RSS: VmHWM of the app process, read just before quitting.

Every key waits for its result before the next one is sent. The screen is
polled with capture-pane every ``--poll-ms`` plus the capture's own cost, so a
result is seen up to one poll period late; the cost of one capture (measured
at the start of each run and printed as "floor") is the smallest latency this
can report. Times start when ``tmux send-keys`` returns, by which time the
tmux server has written the key to the app's terminal.

The header is looked for in the state pane only (the box titled "state diff"
below the status line, right of the timeline), so neither the status line
("seq N of TOTAL") nor a timeline row can be mistaken for it. In a run with an
error the rows after the failing one have no state (and no header): ``:`` and
``j`` then stay at or before the failing seq and End is not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

WIDTH, HEIGHT = 140, 40
HEADER = re.compile(r"seq (\d+) · ")
POSITION = re.compile(r"\bseq (\d+) of (\d+)")
ERROR_AT = re.compile(r"error at (?:seq (\d+)|line \d+|start)")
GOTO_INPUT = re.compile(r"▊\s*(\d*)\s*▎")
STATE_TITLES = ("╭─ state diff", "╭─ full state")


class BenchError(Exception):
    """The app or tmux did not behave: this run cannot be measured."""


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- reading the screen -------------------------------------------------------
@dataclass
class Screen:
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @property
    def status(self) -> str:
        lines = self.lines
        return lines[0] if lines else ""

    def header_seq(self) -> int | None:
        """The seq in the state pane's header line, if one is drawn."""
        lines = self.lines
        # the state pane's title row and column; without one (stacked layout, or
        # covered), every line but the status line and the footer
        top, col = next(
            (
                (i, c)
                for i, line in enumerate(lines[1:], start=1)
                if (c := max(line.find(t) for t in STATE_TITLES)) >= 0
            ),
            (0, 0),
        )
        for line in lines[top + 1 : -1]:
            found = [m for m in HEADER.finditer(line) if m.start() >= col // 2]
            if found:  # rightmost: the state pane is right of the timeline
                return int(found[-1].group(1))
            if col and len(line) > col and line[col] == "╰":
                break  # bottom of the state pane
        return None

    def position(self) -> tuple[int, int] | None:
        m = POSITION.search(self.status)
        return (int(m.group(1)), int(m.group(2))) if m else None

    def validated(self) -> bool:
        return "verified" in self.status or "error at" in self.status

    def error_seq(self) -> int | None:
        """The failing seq if the status says "error at seq N" (0: error with no seq)."""
        m = ERROR_AT.search(self.status)
        if m is None:
            return None
        return int(m.group(1)) if m.group(1) else 0

    def goto_prompt(self) -> str | None:
        """The digits typed into the go-to-seq prompt, None when it is not open."""
        lines = self.lines
        for i, line in enumerate(lines):
            if "Go to a seq (" in line:
                for below in lines[i + 1 : i + 6]:
                    m = GOTO_INPUT.search(below)
                    if m:
                        return m.group(1)
                return ""
        return None


# -- driving tmux -------------------------------------------------------------
class Tmux:
    def __init__(self, session: str, poll: float, timeout: float) -> None:
        self.session = session
        self.poll = poll
        self.timeout = timeout

    def cmd(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(["tmux", *args], capture_output=True, text=True)
        if check and done.returncode != 0:
            raise BenchError(f"tmux {args[0]}: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def start(self, command: str) -> None:
        # remain-on-exit: if the app dies, its last screen (and error) stays readable
        self.cmd(
            "new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), "-s", self.session,
            command, ";", "set-option", "-w", "-t", self.session, "remain-on-exit", "on",
        )  # fmt: skip

    def alive(self) -> bool:
        out = self.cmd("display", "-p", "-t", self.session, "#{pane_dead}", check=False)
        return out.strip() == "0"

    def exists(self) -> bool:
        done = subprocess.run(["tmux", "has-session", "-t", self.session], capture_output=True)
        return done.returncode == 0

    def kill(self) -> None:
        if self.exists():
            subprocess.run(["tmux", "kill-session", "-t", self.session], capture_output=True)

    def capture(self) -> Screen:
        return Screen(self.cmd("capture-pane", "-p", "-t", self.session))

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.cmd("send-keys", "-t", self.session, *(["-l"] if literal else []), *keys)

    def wait(self, ok, what: str, t0: float, timeout: float | None = None) -> tuple[float, Screen]:  # type: ignore[no-untyped-def]
        """Poll until ``ok(screen)``; seconds since ``t0`` at that capture."""
        limit = self.timeout if timeout is None else timeout
        next_check = time.perf_counter() + 0.5
        while True:
            screen = self.capture()
            now = time.perf_counter()
            if ok(screen):
                return now - t0, screen
            if now - t0 > limit:
                raise BenchError(f"timed out after {limit:g} s waiting for {what}")
            if now > next_check:
                next_check = now + 0.5
                if not self.alive():
                    tail = " | ".join(ln.strip() for ln in screen.lines[-6:] if ln.strip())
                    raise BenchError(f"the app exited while waiting for {what}: {tail}")
            time.sleep(self.poll)

    def app_pid(self) -> int | None:
        """The app's python process: the pane's process, or its child if a shell is between."""
        out = self.cmd("display", "-p", "-t", self.session, "#{pane_pid}").strip()
        if not out.isdigit():
            return None
        pid = int(out)
        for _ in range(3):
            if _is_app(pid):
                return pid
            children = _children(pid)
            if not children:
                return None
            pid = children[0]
        return None


def _is_app(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return False
    return b"replay_tui" in cmdline or b"replay-tui" in cmdline


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


def peak_rss_mib(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


# -- one run ------------------------------------------------------------------
@dataclass
class Result:
    run: str
    events: int | None = None
    verdict: str = ""
    first_screen_s: float | None = None
    validation_s: float | None = None
    floor_ms: float | None = None  # one capture-pane
    send_keys_ms: float | None = None  # one send-keys
    j_ms: list[float] = field(default_factory=list)
    goto_ms: list[float] = field(default_factory=list)
    goto_targets: list[int] = field(default_factory=list)
    end_ms: float | None = None
    peak_rss_mib: float | None = None
    problem: str = ""

    def summary(self) -> dict[str, float | None]:
        return {
            "j_p50_ms": pct(self.j_ms, 0.5),
            "j_p90_ms": pct(self.j_ms, 0.9),
            "j_max_ms": max(self.j_ms) if self.j_ms else None,
            "goto_p50_ms": pct(self.goto_ms, 0.5),
            "goto_p90_ms": pct(self.goto_ms, 0.9),
        }


def measure_cost(fn, n: int = 30) -> float:  # type: ignore[no-untyped-def]
    """Median ms of ``fn()``."""
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return pct(times, 0.5) or 0.0


def bench_run(run: Path, args: argparse.Namespace, index: int) -> Result:
    res = Result(run=str(run))
    session = f"bench_{os.getpid()}_{index}"
    tmux = Tmux(session, args.poll_ms / 1e3, args.key_timeout)
    command = f"{shlex.quote(sys.executable)} -m replay_tui {shlex.quote(str(run.resolve()))}"
    log = (lambda *a: print(*a, file=sys.stderr, flush=True)) if args.verbose else lambda *a: None
    try:
        t0 = time.perf_counter()
        tmux.start(command)
        first: float | None = None
        validated: float | None = None
        screen = Screen("")

        def started(s: Screen) -> bool:
            nonlocal first, validated
            now = time.perf_counter() - t0
            if first is None and s.header_seq() is not None:
                first = now  # seq 1; in a run with an error the app may open at the error
            if validated is None and s.validated():
                validated = now
            if validated is not None and first is None and now - validated > 5:
                raise BenchError(f"no state header 5 s after validation: {s.status.strip()!r}")
            return first is not None and validated is not None

        try:
            _, screen = tmux.wait(started, "the first screen and validation", t0, args.open_timeout)
        except BenchError as exc:
            if first is None or not tmux.alive():
                raise
            res.problem = f"{exc} (keys measured while validating)"
        res.first_screen_s, res.validation_s = first, validated
        log(f"{run}: first screen {first:.2f} s, validation {_f(validated, '.2f')} s")

        # what a capture and a send-keys cost (the latter sending nothing)
        res.floor_ms = measure_cost(tmux.capture)
        res.send_keys_ms = measure_cost(lambda: tmux.keys("", literal=True), 10)

        screen = tmux.capture()
        pos = screen.position()
        if pos is None:
            raise BenchError(f"no 'seq N of TOTAL' in the status line: {screen.status!r}")
        total = pos[1]
        res.events = total
        res.verdict = (
            "verified" if "verified" in screen.status else "error" if validated else "validating"
        )
        err = screen.error_seq()
        # the highest seq with a state header (the failing seq shows its error under one)
        limit = total if err is None else err
        if limit < 1:
            raise BenchError(f"no event has a state: {screen.status.strip()!r}")
        current = screen.header_seq() or 1

        def key_until(keys: list[str], seq: int, literal: bool = False) -> float:
            tmux.keys(*keys, literal=literal)
            t = time.perf_counter()  # the key is in the app's terminal by now
            took, _ = tmux.wait(lambda s: s.header_seq() == seq, f"the header of seq {seq}", t)
            return took * 1e3

        def goto(seq: int) -> float:
            """``:``, digits, Enter: ms from the Enter to the header of ``seq``."""
            tmux.keys(":", literal=True)
            now = time.perf_counter()
            tmux.wait(lambda s: s.goto_prompt() is not None, "the go-to prompt", now)
            tmux.keys(str(seq), literal=True)
            now = time.perf_counter()
            tmux.wait(lambda s: s.goto_prompt() == str(seq), f"{seq} in the prompt", now)
            return key_until(["Enter"], seq)

        deadline = time.perf_counter() + args.budget if args.budget else None

        def in_budget() -> bool:
            return deadline is None or time.perf_counter() < deadline

        # (a) j from the middle
        steps = min(args.steps, limit - 1)
        start = max(1, min(limit // 2, limit - steps))
        if steps > 0:
            if start != current:
                goto(start)
            current = start
            for _ in range(steps):
                if not in_budget():
                    break
                res.j_ms.append(key_until(["j"], current + 1))
                current += 1
            log(f"{run}: j {_f(pct(res.j_ms, 0.5), '.0f')} ms p50 ({len(res.j_ms)} steps)")

        # (b) : to random seqs
        rng = random.Random(args.seed)
        for _ in range(args.jumps if limit > 1 else 0):
            if not in_budget():
                break
            target = current
            while target == current:
                target = rng.randint(1, limit)
            res.goto_ms.append(goto(target))
            res.goto_targets.append(target)
            current = target
        log(f"{run}: : {_f(pct(res.goto_ms, 0.5), '.0f')} ms p50 ({len(res.goto_ms)} jumps)")

        # (c) End from the first row
        if limit == total and total > 1:
            if current != 1:
                key_until(["Home"], 1)
            res.end_ms = key_until(["End"], total)
            log(f"{run}: End {res.end_ms:.0f} ms")

        res.peak_rss_mib = peak_rss_mib(tmux.app_pid())
        tmux.keys("q", literal=True)
        end = time.perf_counter() + 10
        while tmux.alive() and time.perf_counter() < end:
            time.sleep(0.02)
    except BenchError as exc:
        res.problem = str(exc)
    finally:
        tmux.kill()
    return res


# -- output -------------------------------------------------------------------
COLUMNS = [
    ("run", 24),
    ("events", 8),
    ("first s", 8),
    ("valid. s", 9),
    ("j p50/p90 ms", 14),
    ("j max", 7),
    (": p50/p90 ms", 14),
    ("End ms", 8),
    ("RSS MiB", 8),
    ("floor ms", 9),
]


def _f(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def row(res: Result) -> str:
    s = res.summary()
    name = Path(res.run).name
    cells = [
        name if len(name) <= 24 else "…" + name[-23:],
        _f(res.events, ","),
        _f(res.first_screen_s, ".2f"),
        _f(res.validation_s, ".2f"),
        f"{_f(s['j_p50_ms'], '.0f')}/{_f(s['j_p90_ms'], '.0f')}",
        _f(s["j_max_ms"], ".0f"),
        f"{_f(s['goto_p50_ms'], '.0f')}/{_f(s['goto_p90_ms'], '.0f')}",
        _f(res.end_ms, ".0f"),
        _f(res.peak_rss_mib, ".0f"),
        _f(res.floor_ms, ".1f"),
    ]
    return "  ".join(
        c.rjust(w) if i else c.ljust(w)
        for i, (c, (_, w)) in enumerate(zip(cells, COLUMNS, strict=True))
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, metavar="RUN")
    ap.add_argument("--steps", type=int, default=30, help="j presses (default 30)")
    ap.add_argument("--jumps", type=int, default=15, help=": jumps (default 15)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the jump targets (default 7)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON")
    ap.add_argument("--poll-ms", type=float, default=2.0, help="sleep between captures (2)")
    ap.add_argument(
        "--key-timeout", type=float, default=120.0, help="seconds to wait for one key (120)"
    )
    ap.add_argument(
        "--open-timeout",
        type=float,
        default=600.0,
        help="seconds to wait for the first screen and validation (600); past it, keys are "
        "measured while validation goes on",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=0.0,
        help="seconds per run for j and : samples; those left are skipped (0: no limit)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        print("bench_keys: tmux not found (apt-get install -y tmux)", file=sys.stderr)
        return 2
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    print(f"# {version}, {WIDTH}x{HEIGHT}, poll every {args.poll_ms:g} ms + one capture-pane")
    print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(COLUMNS)))
    results = []
    for i, run in enumerate(args.runs):
        res = bench_run(run, args, i)
        results.append(res)
        print(row(res), flush=True)
        if res.problem:
            print(f"#   {Path(res.run).name}: {res.problem}", flush=True)
    floors = [r.floor_ms for r in results if r.floor_ms is not None]
    sends = [r.send_keys_ms for r in results if r.send_keys_ms is not None]
    if floors:
        print(
            f"# floor: one capture-pane takes {min(floors):.1f}-{max(floors):.1f} ms (p50), "
            f"one send-keys {min(sends):.1f}-{max(sends):.1f} ms (not counted); a result is "
            f"seen up to {args.poll_ms:g} ms + one capture late"
        )
    if args.json:
        out = [{**asdict(r), **r.summary()} for r in results]
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 1 if any(r.problem for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
