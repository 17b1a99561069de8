"""A Claude Code session with one huge tool result: how long a key press can
be kept waiting while the inspector opens it.

    python benchmarks/bench_big_result.py [--mb 12] [--repeat 5] [--workdir DIR]

Builds (deterministically) a copy of ``sample_runs/agent-sessions/
claude-code-short.jsonl`` whose first ``Read`` result is a file of numbered
source lines making the result line about ``--mb`` MB (the text both in the
``tool_result`` block and in ``toolUseResult.file.content``, as Claude Code
writes a Read). The app runs headless at 140x40. While it works, a probe in
the app's event loop wakes every millisecond and records the longest gap
between two wake-ups: that is how long a key press arriving then would have
waited (by the main thread busy, or by a worker holding the interpreter lock).

Timed, for the big result line and, as the baseline in the same run, for
the small line before it (alternately, --repeat times each):

- pane: from the go-to (``:`` N Enter) to the receipt pane showing that line;
- longest wait: the probe's longest gap over that time (a frame is 16.7 ms);
- then ``o`` on the big line: the result reader's first page, and the longest
  wait while it opens, and while it pages to the end (End).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay_tui.ui.launch import make_app  # noqa: E402

SAMPLE = ROOT / "sample_runs" / "agent-sessions" / "claude-code-short.jsonl"


def build(dest: Path, mb: float) -> tuple[int, int]:
    """Write the session with its big Read result; (1-based line, its bytes)."""
    lines = SAMPLE.read_bytes().splitlines()
    records = [orjson.loads(raw) for raw in lines]
    reads = [
        i
        for i, r in enumerate(records)
        if isinstance(r.get("toolUseResult"), dict)
        and isinstance(r["toolUseResult"].get("file"), dict)
    ]
    if not reads:
        raise SystemExit(f"no Read result in {SAMPLE}")
    number = reads[0]
    rec = records[number]
    want = int(mb * 1_000_000) // 2  # the text is written twice
    rows, size, i = [], 0, 0
    while size < want:
        i += 1
        row = f'{i:6}\tdef handler_{i}(event: Event) -> bool:  # "retry" \\ {i * 7919 % 10007}'
        rows.append(row)
        size += len(row) + 1
    text = "\n".join(rows)
    rec["message"]["content"][0]["content"] = text
    rec["toolUseResult"]["file"]["content"] = text
    rec["toolUseResult"]["file"]["numLines"] = len(rows)
    rec["toolUseResult"]["file"]["totalLines"] = len(rows)
    lines[number] = orjson.dumps(rec)
    dest.write_bytes(b"\n".join(lines) + b"\n")
    return number + 1, len(lines[number])


class LagProbe:
    """The longest gap between wake-ups of a 1 ms sleeper in the event loop."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            self.longest = max(self.longest, now - last)
            last = now

    def start(self) -> None:
        self.longest = 0.0
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> float:
        assert self._task is not None
        self._task.cancel()
        return self.longest


async def wait_for(check, timeout: float = 30.0) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > timeout:
            raise SystemExit("timed out")
        await asyncio.sleep(0.0005)
    return time.perf_counter() - start


async def goto(app, pilot, seq: int, probe: LagProbe) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(seconds to the receipt pane showing ``seq``, the longest wait meanwhile)."""
    await pilot.press(":", *str(seq))
    await pilot.pause()

    def shown() -> bool:  # the side panes draw the receipt with the view they hold
        view = app.main.side.line_view
        return view is not None and view.index == seq - 1

    probe.start()
    start = time.perf_counter()
    app.simulate_key("enter")
    await wait_for(shown)
    took = time.perf_counter() - start
    await asyncio.sleep(0.05)  # whatever follows the pane (a repaint) counts too
    return took, probe.stop()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=12.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="replay-bench-big-"))
    work.mkdir(parents=True, exist_ok=True)
    session = work / "session.jsonl"
    seq, size = build(session, args.mb)
    print(f"{session}: result line {seq}, {size:,} bytes")
    app = make_app(session)
    probe = LagProbe()
    big: list[tuple[float, float]] = []
    small: list[tuple[float, float]] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(lambda: not app.main.validating, 120)
        await pilot.pause()
        for _ in range(args.repeat):
            small.append(await goto(app, pilot, seq - 1, probe))
            big.append(await goto(app, pilot, seq, probe))
        report(seq, small, big)
        if not hasattr(app.main, "action_open_result"):
            return  # older code, for a comparison: no o
        reader_open, reader_wait, end_wait = await open_reader(app, pilot, probe)
    print(
        f"o on the big line: first page {reader_open * 1e3:.0f} ms, longest wait "
        f"{reader_wait * 1e3:.1f} ms; End: longest wait {end_wait * 1e3:.1f} ms"
    )


def report(seq: int, small: list[tuple[float, float]], big: list[tuple[float, float]]) -> None:
    """The table of pane times and longest waits."""
    frame = 1 / 60

    def row(name: str, got: list[tuple[float, float]]) -> str:
        panes = sorted(t for t, _ in got)
        waits = sorted(w for _, w in got)
        return (
            f"{name:<22} {statistics.median(panes) * 1e3:9.0f} {panes[-1] * 1e3:9.0f} "
            f"{statistics.median(waits) * 1e3:12.1f} {waits[-1] * 1e3:11.1f} "
            f"{waits[-1] / frame:8.2f}"
        )

    print(
        f"{'line':<22} {'pane p50':>9} {'pane max':>9} "
        f"{'wait p50 ms':>12} {'wait max ms':>11} {'frames':>8}"
    )
    print(row(f"small (line {seq - 1})", small))
    print(row(f"big (line {seq})", big))
    print(
        f"a frame: {frame * 1e3:.1f} ms; big/small longest wait "
        f"{max(w for _, w in big) / max(w for _, w in small):.2f}x"
    )


async def open_reader(app, pilot, probe: LagProbe) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """``o`` on the big line: (to the first page, longest wait; End's longest wait)."""
    probe.start()
    start = time.perf_counter()
    app.simulate_key("o")
    await wait_for(lambda: getattr(app.screen, "first_page_shown", False))
    took = time.perf_counter() - start
    await asyncio.sleep(0.05)
    opened = probe.stop()
    probe.start()
    app.simulate_key("end")
    await wait_for(lambda: app.screen.at_end)
    await asyncio.sleep(0.05)
    end = probe.stop()
    app.simulate_key("escape")
    await pilot.pause()
    return took, opened, end


if __name__ == "__main__":
    asyncio.run(main())
