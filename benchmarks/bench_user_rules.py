"""What rules of your own get: plain dicts, or drafts (``drafts = True``).

    python benchmarks/bench_user_rules.py [--events 20000] [--workdir DIR]

The same ``agent_run`` rules three ways on one generated run, as the app runs
them (``history=True``), each in its own process: built in; as a user rules
file (watched: a timeout, events checked unchanged) taking plain dicts; and
the same file saying ``drafts = True``. For each: validation time, then the
view of a step (the next line) and of a random jump, p50 / p99, and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import PY, generate  # noqa: E402

RULES = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = {drafts}


REDUCER = Rules()
"""

MEASURE = r"""
import json, random, resource, sys, time
sys.path.insert(0, sys.argv[1])
from replay_tui.reducers import load_reducer
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.views.runview import RunView

def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1e3

rules = load_reducer(sys.argv[3])
t = time.perf_counter()
replay = Replay(locate_run(sys.argv[2]), rules, history=True).verify()
validated = time.perf_counter() - t
view = RunView(replay)
rng = random.Random(7)
n = replay.valid
jumps, steps = [], []
for _ in range(int(sys.argv[4])):
    i = rng.randrange(n - 2)
    t = time.perf_counter(); view.line_view(i); jumps.append(time.perf_counter() - t)
    t = time.perf_counter(); view.line_view(i + 1); steps.append(time.perf_counter() - t)
print(json.dumps({
    "history": replay.history is not None, "validated_s": validated,
    "step_p50": q(steps, .5), "step_p99": q(steps, .99),
    "jump_p50": q(jumps, .5), "jump_p99": q(jumps, .99),
    "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    ap.add_argument("--samples", type=int, default=60)
    args = ap.parse_args()
    work = args.workdir / str(args.events)
    work.mkdir(parents=True, exist_ok=True)
    run = generate(work, "valid", args.events)
    specs = [("built-in agent_run", "agent_run")]
    for drafts in (False, True):
        path = work / f"rules_drafts_{drafts}.py"
        path.write_text(RULES.format(drafts=drafts))
        specs.append((f"user rules, drafts = {drafts}", f"{path}:REDUCER"))
    print(f"{args.events:,} events")
    print(
        f"{'rules':<28} {'state store':>11} {'valid. s':>8} {'step p50/p99 ms':>16} "
        f"{'jump p50/p99 ms':>16} {'RSS MiB':>8}"
    )
    for name, spec in specs:
        out = subprocess.run(
            [PY, "-c", MEASURE, str(ROOT), str(run), spec, str(args.samples)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{name:<28} {'yes' if r['history'] else 'no':>11} {r['validated_s']:>8.2f} "
            f"{r['step_p50']:>7.1f}/{r['step_p99']:<8.1f} "
            f"{r['jump_p50']:>7.1f}/{r['jump_p99']:<8.1f} "
            f"{r['rss']:>8.0f}"
        )


if __name__ == "__main__":
    main()
