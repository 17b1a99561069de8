"""The floor of proving a run, and what the engine, the rules and the app add to it.

    python benchmarks/bench_floor.py [--events 1000000] [--repeat 1] [--workdir DIR] [--profile]

On one generated agent run (``bench_scale``'s: a tool call and its receipt
about every 8 events, cached in --workdir), all in one run, each a whole
process (median of --repeat; peak RSS of that process alone):

- ``orjson`` over every line, nothing else: the floor of any strict reader
  in Python; and with an ``Event`` made of each line and one call of a rule
  that returns the state: the floor of any engine that hands Python rules
  an event;
- ``jq -c .seq`` (reads every line, checks nothing) and the seeds' naive
  script (``json.loads`` and ``deepcopy`` per event, receipts parsed);
- ``check`` with null rules (every kind of the run, the state returned
  unchanged) and with ``agent_run``, the latter on both line cores (the
  native one where it is built: ``native/``, see docs/architecture.md;
  there ``agent_run`` itself runs natively too, as ``check`` runs it);
- the app's pass with each: the replay the app opens (``history=True``,
  so every event's changes are kept for seeking), to its verdict, no screen;
- the app itself, headless (``bench_engine``'s driver, 140x40): from start
  to its first screen, and on to ``✓ verified``.

Every process reads its bytecode from a cache, as an installed package
does (this machine sets PYTHONDONTWRITEBYTECODE, which would make each
compile the package again: 0.4 s).

It prints the table and the ratios the decisions cite: the engine's own cost
(null ``check`` against the orjson loop), the rules' cost (``agent_run``
against null), the app's extra (its pass against ``check``), and the
targets of issue 48 beside them. With ``--profile``, each of the four passes
is profiled once more, in one process (py-spy, which samples from outside:
``pip install py-spy``; else cProfile, whose per-call hook inflates a
per-event loop), its profile written into --workdir and the frames with the
most time of their own printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_engine import APP  # noqa: E402
from benchmarks.bench_scale import NAIVE, generate, median_run  # noqa: E402

PY = sys.executable

FLOOR = """
import sys, orjson
loads = orjson.loads
for line in open(sys.argv[1], "rb"):
    loads(line)
"""

#: The least any engine does that hands Python rules an event: each line
#: parsed, made an Event, and a rule that returns the state called with it.
#: Below this is no longer a design of ours but Python's cost of a call and
#: an object per event.
EVENT_FLOOR = """
import sys, orjson
from replay_tui.formats.envelope import Event
def apply(state, event, ctx):
    return state
loads, state, line_no = orjson.loads, {}, 0
for raw in open(sys.argv[1], "rb"):
    line_no += 1
    o = loads(raw)
    e = Event(o, o["seq"], o["run_id"], o["kind"], o.get("payload"), o.get("ts"), None, 1,
              line_no, 0)
    state = apply(state, e, None)
"""

NULL_RULES = '''"""Rules that read nothing: the state stays as it began (the engine's own cost)."""
from replay_tui.reducers.agent_run import REDUCER as _AGENT_RUN


class NullRules:
    name = "null"
    version = "1"
    kinds = _AGENT_RUN.kinds

    def initial_state(self):
        return {}

    def apply(self, state, event, ctx):
        return state

    def summary(self, state):
        return "null"


REDUCER = NullRules()
'''

PASS = """
import sys
from replay_tui.engine.open import open_replay

run, rules, history = sys.argv[1], sys.argv[2] or None, sys.argv[3] == "1"
replay, _ = open_replay(run, rules, watchdog=False, history=history)
replay.verify()
assert replay.error is None, replay.error
print(replay.valid)
"""


def _profile(workdir: Path, name: str, argv: list[str], top: int = 8) -> list[str]:
    """Profile ``python argv`` once; where it is written and the frames
    with the most time of their own. py-spy samples from outside the
    process (no hook in it: ``pip install py-spy``); else cProfile, whose
    per-call hook inflates a per-event loop."""
    if shutil.which("py-spy"):
        out = workdir / f"profile-{name}.txt"  # collapsed stacks: flamegraph.pl, speedscope
        subprocess.run(
            ["py-spy", "record", "-r", "100", "-f", "raw", "-o", str(out), "--", PY, *argv],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        own: dict[str, int] = {}
        for line in out.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            leaf = re.sub(r":\d+\)$", ")", stack.rsplit(";", 1)[-1])  # the function, not its line
            own[leaf] = own.get(leaf, 0) + int(count)
        total = sum(own.values()) or 1
        best = sorted(own.items(), key=lambda kv: -kv[1])[:top]
        return [str(out)] + [f"  {n / total:6.1%}  {leaf}" for leaf, n in best]
    out = workdir / f"profile-{name}.prof"
    subprocess.run(
        [PY, "-m", "cProfile", "-o", str(out), *argv], check=True, stdout=subprocess.DEVNULL
    )
    import io
    import pstats

    text = io.StringIO()
    pstats.Stats(str(out), stream=text).sort_stats("tottime").print_stats(top)
    return [str(out)] + [f"  {line}" for line in text.getvalue().splitlines()[-top - 2 :]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each command (median)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    ap.add_argument("--profile", action="store_true", help="profile each pass into --workdir")
    args = ap.parse_args()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    run = generate(work, "valid", args.events)
    events = run / "events.jsonl"
    null = work / "null_rules.py"
    null.write_text(NULL_RULES)
    script = work / "pass.py"
    script.write_text(PASS)
    rules = {"null": f"{null}:REDUCER", "agent_run": ""}

    rows: dict[str, tuple[float, float]] = {}
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "replay_tui")], check=True)
    from replay_tui.core import line_core

    default_core = "native" if line_core.NATIVE is not None else "python"
    cores = ["python", "native"] if line_core.NATIVE is not None else ["python"]

    def time_it(name: str, cmd: list[str]) -> None:
        seconds, rss, _ = median_run(cmd, args.repeat)
        rows[name] = (seconds, rss)

    time_it("orjson over every line", [PY, "-c", FLOOR, str(events)])
    time_it("orjson + an Event + a call", [PY, "-c", EVENT_FLOOR, str(events)])
    if shutil.which("jq"):
        time_it("jq -c .seq", ["jq", "-c", ".seq", str(events)])
    time_it("naive script (json + deepcopy)", [PY, "-c", NAIVE, str(run)])
    check = [PY, "-m", "replay_tui", "check", str(run)]
    time_it("check, null rules", [*check, "--reducer", rules["null"]])
    for core in cores:
        time_it(f"check, agent_run, {core} core", ["env", f"REPLAY_TUI_LINE_CORE={core}", *check])
    for name, spec in rules.items():
        time_it(f"app's pass, {name} rules", [PY, str(script), str(run), spec, "1"])
    opened = []  # the app too a median of --repeat runs, as every other row
    for _ in range(args.repeat):
        shown = subprocess.run(
            [PY, "-c", APP, str(run), str(ROOT), "3"], capture_output=True, text=True, check=True
        )
        said = json.loads(shown.stdout.strip().splitlines()[-1])
        opened.append((said["first_s"] + said["validated_s"], said["rss"]))
    rows["the app, open -> verified"] = sorted(opened)[len(opened) // 2]

    rows["check, agent_run rules"] = rows[f"check, agent_run, {default_core} core"]
    size = events.stat().st_size
    print(f"{args.events:,} events, {size / 1e6:.0f} MB (median of {args.repeat}), in {work}")
    print(f"line core: {line_core.describe()} (the rows without one name it)")
    print(f"{'pass':<34} {'s':>8} {'µs/event':>9} {'RSS MiB':>8}")
    for name, (seconds, rss) in rows.items():
        if name == "check, agent_run rules":
            continue  # the default core's row, printed under its name
        print(f"{name:<34} {seconds:8.2f} {seconds / args.events * 1e6:9.2f} {rss:8.0f}")

    floor = rows["orjson over every line"][0]
    check_null, check_rules = rows["check, null rules"][0], rows["check, agent_run rules"][0]
    app_null, app_rules = rows["app's pass, null rules"][0], rows["app's pass, agent_run rules"][0]
    naive = rows["naive script (json + deepcopy)"][0]
    ratios = [
        ("engine's own cost: null check / orjson loop", check_null / floor, "x", "<= 2"),
        (
            "  against orjson + an Event + a call",
            check_null / rows["orjson + an Event + a call"][0],
            "x",
            "",
        ),
        ("rules' cost: agent_run check - null check", check_rules - check_null, " s", ""),
        ("naive / check (agent_run)", naive / check_rules, "x", ">= 2.5"),
    ]
    if "jq -c .seq" in rows:
        jq = rows["jq -c .seq"][0]
        ratios.append(("jq / check (agent_run)", jq / check_rules, "x", ">= 0.6"))
    for core in cores:
        alone = rows[f"check, agent_run, {core} core"][0]
        ratios.append((f"  {core} core: naive / check", naive / alone, "x", ""))
        if "jq -c .seq" in rows:
            ratios.append((f"  {core} core: jq / check", rows["jq -c .seq"][0] / alone, "x", ""))
    ratios += [
        ("app's pass / check, null rules", app_null / check_null, "x", ""),
        ("app's pass / check, agent_run rules", app_rules / check_rules, "x", ""),
        ("the app, open -> verified / check", rows["the app, open -> verified"][0] / check_rules,
         "x", "<= 1.5"),
    ]  # fmt: skip
    print()
    for name, value, unit, target in ratios:
        aim = f"  (target {target})" if target else ""
        print(f"{name:<45} {value:6.2f}{unit}{aim}")

    if args.profile:
        for name, spec in rules.items():
            for what, history in (("check", "0"), ("app", "1")):
                said = _profile(work, f"{what}-{name}", [str(script), str(run), spec, history])
                print(f"\nprofile of the {what} pass, {name} rules: {said[0]}")
                print("\n".join(said[1:]))


if __name__ == "__main__":
    main()
