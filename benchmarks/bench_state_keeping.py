"""What keeping states costs the app's pass, by the means it could use.

    python benchmarks/bench_state_keeping.py [--events 100000] [--every 512]

Issue 48 asks for the app's pass on plain values, as ``check``'s, with
states kept at intervals and what is shown at a seq replayed forward from
the nearest one. This measures, on one generated agent run (``bench_scale``'s),
the ``agent_run`` rules applied to the same events (parsed once, before the
clock starts) in one process, keeping the state every ``--every`` events:

- ``plain``: the rules on one plain dict, nothing kept (``check``'s rules);
- ``plain + JSON``: and the state written as canonical JSON at each keep
  (``check``'s checkpoints), then read back as a seek would;
- ``plain + frozen copy``: and the state frozen whole at each keep (no
  sharing with the last kept one);
- ``journal``: the app's pass today: the rules on a draft, each event's
  patches found and logged, the draft frozen at each keep (sharing all that
  did not change);
- ``drafts, no patches``: the rules on one draft between keeps, committed
  at each keep, no per-event end (what "no patches in the pass" would be).

Each row prints seconds, µs an event, the ratio to ``plain`` in the same
run, and what a jump would cost: the kept state read back, then half the
spacing replayed on a journal (the event shown needs its patches), at the
journal's cost in this run. A key may take 50 ms (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import generate  # noqa: E402
from replay_tui.core import strict_json  # noqa: E402
from replay_tui.engine.open import open_replay  # noqa: E402
from replay_tui.formats.envelope import Event  # noqa: E402
from replay_tui.reducers.base import Context  # noqa: E402
from replay_tui.state import canonical  # noqa: E402
from replay_tui.state.diff import Change  # noqa: E402
from replay_tui.state.drafts import DictDraft, Journal  # noqa: E402
from replay_tui.state.patchlog import PatchLog  # noqa: E402
from replay_tui.state.persistent import freeze, thaw  # noqa: E402

Apply = Callable[[Any, Event, Context], Any]


def plain(events: list[Event], apply: Apply, ctx: Context, initial: Any, every: int) -> Any:
    state = initial
    for e in events:
        state = apply(state, e, ctx)
    return state


def plain_keeping(keep: Callable[[Any], Any]) -> Callable[..., Any]:
    """The rules on plain values, ``keep(state)`` kept every ``every`` events."""

    def run(events: list[Event], apply: Apply, ctx: Context, initial: Any, every: int) -> Any:
        state, kept = initial, []
        for i, e in enumerate(events, 1):
            state = apply(state, e, ctx)
            if i % every == 0:
                kept.append(keep(state))
                gc.freeze()
        return kept

    return run


plain_json = plain_keeping(canonical.dumps_fast)
plain_frozen = plain_keeping(freeze)


def journal(events: list[Event], apply: Apply, ctx: Context, initial: Any, every: int) -> Any:
    log, kept = PatchLog(), []
    j = Journal(freeze(initial))
    ctx.carry_memo(j.base, j.root)
    for i, e in enumerate(events, 1):
        apply(j.root, e, ctx)
        patches: list[Change] = []
        j.end_event(patches)
        log.append(patches)
        if i % every == 0:
            root = j.root
            kept.append(j.freeze())
            ctx.carry_memo(root, j.root)  # as the engine does: the rules' memo goes on
            gc.freeze()
    log.close()
    return kept


def drafts(events: list[Event], apply: Apply, ctx: Context, initial: Any, every: int) -> Any:
    frozen = freeze(initial)
    root, kept = DictDraft(frozen), []
    for i, e in enumerate(events, 1):
        apply(root, e, ctx)
        if i % every == 0:
            frozen = root.commit(None)
            kept.append(frozen)
            old, root = root, DictDraft(frozen)
            ctx.carry_memo(old, root)
            gc.freeze()
    return kept


def resume(kept: Any) -> float:
    """Seconds to have the last kept state as the rules take it again."""
    last = kept[-1] if isinstance(kept, list) and kept else kept
    t = time.perf_counter()
    if isinstance(last, bytes):
        strict_json.loads_written(last)
    elif isinstance(last, dict) and type(last) is dict:
        pass  # the live state: nothing to read
    else:
        DictDraft(last)  # a draft over a frozen state costs nothing up front
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--every", type=int, default=512, help="events between kept states")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    args = ap.parse_args()
    run = generate(args.workdir, f"keeping-{args.events}", args.events)
    replay, _ = open_replay(str(run), None, watchdog=False)
    replay.verify()
    assert replay.error is None, replay.error
    events = [replay._event_for_apply(i) for i in range(replay.valid)]
    reducer = replay.reducer
    # the frozen copies last: the objects they leave make what follows slower
    means = [
        ("plain", plain),
        ("drafts, no patches", drafts),
        ("journal (the app today)", journal),
        ("plain + JSON", plain_json),
        ("plain + frozen copy", plain_frozen),
    ]
    n, every = len(events), args.every
    rows: list[tuple[str, float, float]] = []  # name, seconds, resume read-back seconds
    finals: list[str] = []
    for name, fn in means:
        ctx = replay._side_context()
        gc.collect()
        gc.disable()
        t = time.perf_counter()
        kept = fn(events, reducer.apply, ctx, reducer.initial_state(), every)
        seconds = time.perf_counter() - t
        gc.enable()
        gc.unfreeze()
        rows.append((name, seconds, resume(kept)))
        if isinstance(kept, list) and kept and not isinstance(kept[-1], bytes):
            finals.append(canonical.digest(thaw(kept[-1])))
        del kept
        gc.collect()
    assert len(set(finals)) <= 1, "the means kept different states"
    base = rows[0][1]
    journal_us = next(s for name, s, _ in rows if name.startswith("journal")) / n
    print(f"{n:,} events of agent_run, a state kept every {every:,}")
    print(f"{'means':<26} {'s':>8} {'µs/event':>9} {'vs plain':>9} {'jump ms':>8}")
    for name, seconds, back in rows:
        # a jump shows an event's patches: from the kept state, half the
        # spacing replayed on a journal (the app today walks its logged patches)
        ms = (back + every / 2 * journal_us) * 1e3
        jump = "-" if name == "plain" or name.startswith("journal") else f"{ms:.1f}"
        us = seconds / n * 1e6
        print(f"{name:<26} {seconds:>8.2f} {us:>9.1f} {seconds / base:>8.2f}x {jump:>8}")
    replay.close()


if __name__ == "__main__":
    main()
