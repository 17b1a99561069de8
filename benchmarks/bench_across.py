"""Questions across time: ``when`` / ``history`` against ``check``, and the
app's answers from the patch log.

    python benchmarks/bench_across.py [--sizes 200000,1000000] [--workdir DIR]
                                      [--terminal] [--json OUT]
    python benchmarks/bench_across.py --first [--repeat 3] [--source DIR] [--sizes ...]

Per size, on a generated agent run (the same generator and seed as
``bench_engine.py``), baselines in the same run:

- CLI, each command its own process, wall time and its ratio to ``check``
  on the same run (the issue's bound: at most 1.3x): ``when`` with a
  condition that never holds (the whole run is searched), ``when --all`` on a
  leaf that changes often, ``history`` of one call's status, ``history`` of
  ``spent.tokens`` (changes at every model event) and ``history`` of
  ``calls`` (an object too big to compare after every event: answered from
  the patch log);
- the app's engine (one process, after validation, as the app's worker runs
  it): the whole-run scan of the patch log for each condition and watch, in
  ms (the app's bound: 1 s);
- with ``--terminal``, the real app in tmux: from Enter on ``:CONDITION`` to
  the status line showing the answer ("k of n (n/N)" or "never"), and from
  ``w`` to the watch pane's title saying how many changes it found;
- with ``--first`` (alone), only the first question right after "✓
  verified", before the patch log is made, ``--repeat`` times, with the
  app's code from ``--source`` (a checkout of another commit, to compare).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import PY, generate, run  # noqa: E402

CONDITIONS = [
    ("never true", 'phase == "no such phase"'),
    ("one call denied", 'calls.call-000777.status == "denied"'),
    ("tokens pass 1M", "spent.tokens > 1000000"),
    ("more than 100k calls", "len(calls) > 100000"),
    ("attempt 3, tests failing", "attempt == 3 and checks[1].passed == false"),
]
WATCHES = ["calls.call-000777.status", "attempt", "spent.tokens", "spent"]

ENGINE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from replay_tui.questions.across import condition_turns, iter_path_changes
from replay_tui.questions.condition import parse_condition, parse_path
from replay_tui.reducers import rules_for_run
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.state.patchlog import PatchLog

paths = locate_run(Path(sys.argv[1]))
replay = Replay(paths, rules_for_run(None, paths.events, paths.format), history=True)
t = time.perf_counter(); replay.verify(); validated = time.perf_counter() - t
out = {"validated_s": validated}
def ask(key):
    out[key] = {"conditions": {}, "watches": {}}
    for text in json.loads(sys.argv[3]):
        cond = parse_condition(text)
        t = time.perf_counter(); found = condition_turns(replay, cond, replay.valid)
        out[key]["conditions"][text] = [(time.perf_counter() - t) * 1e3, len(found)]
    for text in json.loads(sys.argv[4]):
        t = time.perf_counter()
        found = list(iter_path_changes(replay, parse_path(text), replay.valid))
        out[key]["watches"][text] = [(time.perf_counter() - t) * 1e3, len(found)]
history = replay.history
if history is not None and history.made_again:
    # right after the proof, before the patch log is made behind it (each
    # question on its own: the log an object's history makes is let go)
    out["before_log"] = {"conditions": {}, "watches": {}}
    for kind, texts in (("conditions", sys.argv[3]), ("watches", sys.argv[4])):
        for text in json.loads(texts):
            history.patches.close()
            history.patches = PatchLog()
            history._spans.clear()
            t = time.perf_counter()
            if kind == "conditions":
                found = condition_turns(replay, parse_condition(text), replay.valid)
            else:
                found = list(iter_path_changes(replay, parse_path(text), replay.valid))
            out["before_log"][kind][text] = [(time.perf_counter() - t) * 1e3, len(found)]
    history.patches.close()
    history.patches = PatchLog()
    t = time.perf_counter(); history.patch_log(); out["log_s"] = time.perf_counter() - t
ask("from_log")
print(json.dumps(out))
"""


def cli(run_dir: Path, *args: str) -> float:
    seconds, _, _ = run([PY, "-m", "replay_tui", *args[:1], str(run_dir), *args[1:]])
    return seconds


def bench_cli(run_dir: Path) -> dict[str, float]:
    cli(run_dir, "check")  # warm the page cache (125,000 receipt files at 1M): not timed
    out = {"check": cli(run_dir, "check")}
    out["when (never true)"] = cli(run_dir, "when", CONDITIONS[0][1])
    out["when --all spent.tokens > 1000000"] = cli(
        run_dir, "when", "--all", "spent.tokens > 1000000"
    )
    out["history calls.call-000777.status"] = cli(run_dir, "history", "calls.call-000777.status")
    out["history spent.tokens"] = cli(run_dir, "history", "spent.tokens")
    out["history calls (patch log)"] = cli(run_dir, "history", "calls")
    return out


def bench_engine(run_dir: Path) -> dict[str, object]:
    done = subprocess.run(
        [
            PY, "-c", ENGINE, str(run_dir), str(ROOT),
            json.dumps([c for _, c in CONDITIONS]), json.dumps(WATCHES),
        ],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def bench_terminal(run_dir: Path) -> dict[str, float]:
    from bench_keys import Tmux

    tmux = Tmux(f"bench-across-{id(run_dir)}", poll=0.005, timeout=300)
    tmux.kill()
    out: dict[str, float] = {}
    try:
        tmux.start(f"{PY} -m replay_tui {run_dir}")
        t0 = time.perf_counter()
        tmux.wait(lambda s: s.validated(), "validation", t0, timeout=600)
        for label, text in CONDITIONS:
            tmux.keys("g")
            tmux.keys(":")
            tmux.wait(lambda s: "Go to a seq (" in s.text, "the prompt", time.perf_counter())
            time.sleep(0.3)  # the input takes focus just after the prompt is drawn
            tmux.keys(text, literal=True)
            tmux.wait(
                lambda s, t=text: t[:20] in s.text, "the typed condition", time.perf_counter()
            )
            t = time.perf_counter()
            tmux.keys("Enter")
            seconds, _ = tmux.wait(
                lambda s, t=text: t in s.status and ("(n/N)" in s.status or ": never" in s.status),
                f"the answer to {text}",
                t,
            )
            out[f":{label}"] = seconds
            time.sleep(0.2)
            tmux.keys("Escape")  # forget it (alone: Esc then a key reads as Alt+key)
            tmux.wait(
                lambda s, t=text: t not in s.status, "the condition forgotten", time.perf_counter()
            )
            time.sleep(0.2)
        tmux.keys(":")
        tmux.wait(lambda s: "Go to a seq (" in s.text, "the prompt", time.perf_counter())
        tmux.keys("500000" if "1000000" in str(run_dir) else "100000", literal=True)
        tmux.keys("Enter")
        time.sleep(1.0)
        tmux.keys("Tab")
        time.sleep(0.3)
        t = time.perf_counter()
        tmux.keys("w")
        seconds, screen = tmux.wait(_watch_done, "the watch", t)
        title = next((ln for ln in screen.lines if "watch " in ln and "changes" in ln), "")
        out["w: " + title.split("watch ", 1)[1].split(" ─")[0].strip()] = seconds
        tmux.keys("q")
    finally:
        tmux.kill()
    return out


def first_question(run_dir: Path, source: Path, repeat: int) -> list[float]:
    """The first question (``CONDITIONS[0]``, the whole run searched) asked
    in tmux right after "✓ verified", before the patch log is made behind
    the proof: from Enter to the answer on the status line, the app's code
    taken from ``source`` (another tree's, to compare), one app per repeat."""
    from bench_keys import Tmux

    text = CONDITIONS[0][1]
    out: list[float] = []
    for k in range(repeat):
        tmux = Tmux(f"bench-first-{id(run_dir)}-{k}", poll=0.005, timeout=600)
        tmux.kill()
        try:
            core = os.environ.get("REPLAY_TUI_LINE_CORE")  # (tmux's server has its own env)
            chosen = f" REPLAY_TUI_LINE_CORE={core}" if core else ""
            tmux.start(f"env PYTHONPATH={source}{chosen} {PY} -m replay_tui {run_dir}")
            t0 = time.perf_counter()
            tmux.wait(lambda s: s.validated(), "validation", t0, timeout=600)
            tmux.keys(":")
            tmux.wait(lambda s: "Go to a seq (" in s.text, "the prompt", time.perf_counter())
            time.sleep(0.3)  # the input takes focus just after the prompt is drawn
            tmux.keys(text, literal=True)
            tmux.wait(lambda s: text[:20] in s.text, "the typed condition", time.perf_counter())
            t = time.perf_counter()
            tmux.keys("Enter")
            seconds, _ = tmux.wait(
                lambda s: text in s.status and ("(n/N)" in s.status or ": never" in s.status),
                f"the answer to {text}",
                t,
            )
            out.append(seconds)
        finally:
            tmux.kill()
    return out


def _watch_done(screen: object) -> bool:
    """The watch pane's title says how many changes it found (not "so far")."""
    text = screen.text  # type: ignore[attr-defined]
    return any("watch " in ln and " changes " in ln for ln in text.splitlines())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="200000,1000000")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    ap.add_argument("--terminal", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--first",
        action="store_true",
        help="only the first question right after the proof, in tmux (--repeat times)",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--source", type=Path, default=ROOT, help="the app's code for --first (another tree's)"
    )
    args = ap.parse_args()
    if args.first:
        for size in (int(s) for s in args.sizes.split(",")):
            work = args.workdir / str(size)
            work.mkdir(parents=True, exist_ok=True)
            run_dir = generate(work, "valid", size)
            took = first_question(run_dir, args.source.resolve(), args.repeat)
            said = ", ".join(f"{s:.2f}" for s in took)
            print(f"{size:,} events, {args.source}: {CONDITIONS[0][1]} answered in {said} s")
        return
    results: dict[str, object] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        work = args.workdir / str(size)
        work.mkdir(parents=True, exist_ok=True)
        run_dir = generate(work, "valid", size)
        print(f"\n## {size:,} events ({run_dir})", flush=True)
        times = bench_cli(run_dir)
        check = times["check"]
        print("\n| command | seconds | / check |\n|---|---|---|")
        for name, seconds in times.items():
            print(f"| `{name}` | {seconds:.1f} | {seconds / check:.2f} |", flush=True)
        engine = bench_engine(run_dir)
        print(f"\napp validation (engine): {engine['validated_s']:.1f} s")
        if "log_s" in engine:
            print(f"the patch log made behind it: {engine['log_s']:.1f} s")
        print(
            "\n| in the app | right after the proof | once the log is made | answers |"
            "\n|---|---|---|---|"
        )
        before = engine.get("before_log", {})
        for kind in ("conditions", "watches"):
            for text, (ms, count) in engine["from_log"][kind].items():  # type: ignore[index]
                label = f":{text}" if kind == "conditions" else f"w {text}"
                first = before.get(kind, {}).get(text)  # type: ignore[attr-defined]
                told = f"{first[0]:,.0f} ms" if first else "-"
                print(f"| `{label}` | {told} | {ms:,.0f} ms | {count:,} |", flush=True)
        entry: dict[str, object] = {"cli": times, "engine": engine}
        if args.terminal:
            term = bench_terminal(run_dir)
            print("\n| in tmux | Enter / w to the answer on screen |\n|---|---|")
            for name, seconds in term.items():
                print(f"| `{name}` | {seconds * 1e3:.0f} ms |", flush=True)
            entry["terminal"] = term
        results[str(size)] = entry
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
