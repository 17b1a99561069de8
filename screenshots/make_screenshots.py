"""Regenerate the SVG screenshots in this folder from the real app.

    python screenshots/make_screenshots.py

Each shot opens a sample run with the same app factory the CLI uses, waits
for validation and for the selected row's view, presses keys, and saves an
SVG. Run it whenever the UI changes, then look at the pictures.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from replay_tui.ui.app import ReplayApp  # noqa: E402
from replay_tui.ui.launch import make_app  # noqa: E402
from replay_tui.ui.screens.run import ReplayScreen  # noqa: E402

SAMPLES = ROOT / "sample_runs"
INSPECT = ROOT / "tests" / "fixtures" / "inspect-logs" / "generated"
LANGGRAPH = ROOT / "tests" / "fixtures" / "langgraph"

#: (file name, run folder, terminal size, keys to press, what it shows)
SHOTS: list[tuple[str, Path, tuple[int, int], list[str], str]] = [
    ("demo-start.svg", SAMPLES / "demo-001", (140, 40), [], "the demo run, opened"),
    (
        "demo-seq-10.svg",
        SAMPLES / "demo-001",
        (140, 40),
        ["colon", "1", "0", "enter"],
        "seq 10: a failed check moves the run to retrying",
    ),
    (
        "demo-full-state.svg",
        SAMPLES / "demo-001",
        (140, 40),
        ["colon", "6", "enter", "d"],
        "the full state after seq 6, changed paths marked",
    ),
    (
        "broken-divergence.svg",
        SAMPLES / "broken-divergence",
        (140, 40),
        [],
        "strict replay stops at the first inconsistency",
    ),
    (
        "receipt-tampered.svg",
        SAMPLES / "broken-receipt_tampered",
        (140, 40),
        [],
        "the receipt inspector with a tampered receipt",
    ),
    (
        "filter.svg",
        SAMPLES / "long-300",
        (140, 40),
        ["slash", *"tool_denied", "enter"],
        "rows filtered by kind; the state stays that of the true prefix",
    ),
    (
        "narrow-80x24.svg",
        SAMPLES / "demo-001",
        (80, 24),
        ["j", "j", "j"],
        "an 80x24 terminal: panes stacked",
    ),
    ("help.svg", SAMPLES / "demo-001", (140, 40), ["question_mark"], "the key help"),
    (
        "inspect-sample.svg",
        INSPECT / "calculator.eval#parallel:1",
        (140, 40),
        ["colon", *"16", "enter"],
        "an Inspect AI sample: the state after a tool call's store event",
    ),
    (
        "compare-what-if.svg",
        SAMPLES / "refund-180",
        (140, 40),
        ["j", "s", "right_square_bracket"],
        "s on the approval: the run beside its branch without it, which fails at seq 3",
    ),
    (
        "watch-path.svg",
        SAMPLES / "demo-001",
        (140, 40),
        ["colon", "1", "4", "enter", "tab", "w", "up"],
        "w on a change: every seq where calls.call-003.status changed, marked in the gutter",
    ),
    (
        "watch-chart.svg",
        SAMPLES / "demo-001",
        (140, 40),
        ["colon", "9", "enter", "tab", "w"],
        "w on spent.tokens: its value over seq in Braille atop the list, the cursor's seq marked",
    ),
    (
        "watch-chart-bands-80x24.svg",
        SAMPLES / "demo-001",
        (80, 24),
        ["colon", "1", "0", "enter", "tab", "w", "k"],
        "w on phase at 80x24: a band per value, a letter and a colour each, and a legend",
    ),
    (
        "temporal-research.svg",
        SAMPLES / "temporal" / "sdk-python--research-workflow-history.json",
        (140, 40),
        ["colon", "2", "2", "enter"],
        "a Temporal history at event 22: an activity's input and result in the inspector",
    ),
    (
        "temporal-update-after-reset.svg",
        SAMPLES / "temporal" / "hand-written--update-after-reset.json",
        (140, 40),
        ["colon", "1", "1", "enter"],
        "a command completed by a later workflow task, an update accepted after a reset, "
        "and an ignored event of a newer type",
    ),
    (
        "calls-folded.svg",
        SAMPLES / "demo-001",
        (140, 40),
        ["v", "j", "j", "j", "enter"],
        "v: one row per call (tool, status, argument, duration, cost); Enter unfolded "
        "the shell call; the overview strip beside the timeline",
    ),
    (
        "temporal-folded.svg",
        SAMPLES / "temporal" / "sdk-python--research-workflow-history.json",
        (140, 40),
        ["v", "j", "j"],
        "a Temporal history folded: each activity and workflow task one row, with its "
        "type, outcome and duration",
    ),
    (
        "overview-long-run.svg",
        SAMPLES / "long-300",
        (140, 40),
        ["colon", *"150", "enter", "b", "right_curly_bracket", "right_curly_bracket"],
        "the overview strip of a 300-event run: density by time, a bookmark, the "
        "cursor's slice lit after two presses of }",
    ),
    (
        "causes-effects.svg",
        SAMPLES / "temporal" / "hand-written--update-after-reset.json",
        (140, 40),
        ["colon", *"14", "enter"],
        "an activity's start: its cause (the scheduling, seq 11) and its effect (the "
        "completion, seq 15) atop the inspector; p goes to the cause, P back",
    ),
    (
        "claude-code-error.svg",
        SAMPLES / "agent-sessions" / "claude-code-error.jsonl",
        (140, 40),
        ["colon", *"16", "enter"],
        "a Claude Code session at a Bash call that failed: the call's state and its result",
    ),
    (
        "claude-code-subagent.svg",
        SAMPLES / "agent-sessions" / "claude-code-subagent.jsonl",
        (140, 40),
        ["colon", "7", "enter", "t", "colon", "4", "enter"],
        "t at a Task call: the sub-agent's own transcript, over its session",
    ),
    (
        "result-reader.svg",
        SAMPLES / "agent-sessions" / "claude-code-short.jsonl",
        (140, 40),
        ["colon", *"12", "enter", "o"],
        "o at a Read result: the recorded result whole, its file's lines as lines",
    ),
    (
        "claude-code-broken-chain.svg",
        SAMPLES / "agent-sessions" / "claude-code-broken-chain.jsonl",
        (140, 40),
        ["colon", *"30", "enter"],
        "a prompt whose parentUuid names a record never written: a broken_chain finding "
        "that says what a resume drops",
    ),
    (
        "claude-code-resume-walk.svg",
        SAMPLES / "agent-sessions" / "claude-code-broken-chain.jsonl",
        (140, 40),
        ["end", "m"],
        "m at the end: only the records claude --resume would load, back to the break",
    ),
    (
        "otel-trace.svg",
        SAMPLES.parent / "tests" / "fixtures" / "otel-traces" / "adk_py" / "v1_default" / "S2.json",
        (140, 40),
        ["colon", *"21", "enter"],
        "an ADK agent's OpenTelemetry trace at its second tool's end: the turn's tool calls, "
        "their arguments and results, tokens and model calls",
    ),
    (
        "otel-span-tree.svg",
        SAMPLES.parent
        / "tests"
        / "fixtures"
        / "otel-traces"
        / "hand"
        / "openai_agents_handoff.json",
        (140, 40),
        ["v", "down", "down", "down", "down", "down"],
        "an OpenAI Agents SDK handoff as a span tree (v): each span under its parent with its "
        "bar over the run's time; the refund tool's span is its own receipt",
    ),
    (
        "codex-rollout.svg",
        SAMPLES / "agent-sessions" / "codex-rollout.jsonl",
        (140, 40),
        ["colon", *"23", "enter"],
        "a Codex rollout at a command that exited 1",
    ),
    (
        "gemini-rewind.svg",
        ROOT / "tests" / "fixtures" / "gemini-sessions" / "rewind-one.jsonl",
        (140, 40),
        ["colon", *"16", "enter"],
        "a Gemini CLI session at its /rewind: the messages it dropped, the loaded tokens",
    ),
    (
        "gemini-calls.svg",
        ROOT / "tests" / "fixtures" / "gemini-sessions" / "failing-tools.jsonl",
        (140, 40),
        ["colon", *"12", "enter", "v"],
        "a Gemini CLI session's tool calls folded, a command's result as its receipt",
    ),
    (
        "langgraph-thread.svg",
        LANGGRAPH / "agent.sqlite#thread=agent-weather",
        (140, 40),
        ["colon", "5", "enter", "v"],
        "a LangGraph thread: a model's two parallel tool calls folded into one row, each "
        "call's arguments and result in the receipt inspector",
    ),
    (
        "big-state-tree.svg",
        Path(tempfile.gettempdir()) / "replay-tui-shots" / "synth-2400",
        (140, 40),
        ["colon", *"1998", "enter", "d", "tab", "pageup", "up", "enter"],
        "the full state of a run with 300 calls: closed calls, the changed one open, "
        "one opened from the keyboard",
    ),
    (
        "hostile-text.svg",
        ROOT / "tests" / "corpus" / "cases" / "hostile-text-everywhere",
        (140, 40),
        ["j", "j", "j"],
        "terminal escapes, markup and bidi in keys and values, shown inert",
    ),
]


async def settle(app: ReplayApp, pilot: object) -> None:
    for _ in range(300):
        await pilot.pause(0.02)  # type: ignore[attr-defined]
        main = app.screen if isinstance(app.screen, ReplayScreen) else app.main
        if (
            not main.validating
            and main.line_view is not None
            and main.line_view.index == main.timeline.cursor_index
            and (not main.search.filter_text or main.search.matches is not None)
            and (main.watchlist.watched is None or main.watchlist.done)
            and (main.compare.b is None or main.compare.differs is not None)
            and getattr(app.screen, "first_page_shown", True)  # o: its rows laid out
        ):
            break
    await pilot.pause()  # type: ignore[attr-defined]


async def shoot(name: str, run: Path, size: tuple[int, int], keys: list[str]) -> Path:
    app = make_app(run)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        for key in keys:
            await pilot.press(key)
            await settle(app, pilot)
        path = app.save_screenshot(filename=name, path=str(HERE))
    return Path(path)


def big_run(path: Path) -> None:
    """A generated run (deterministic) with a state too big to show whole."""
    from replay_tui.synth.runs import write_agent_run

    if not (path / "events.jsonl").exists():
        shutil.rmtree(path, ignore_errors=True)
        write_agent_run(path, 2400, seed=5)


#: The HTML reports drawn by headless Chromium: (png, run, report's flags, window size).
REPORTS: list[tuple[str, Path, list[str], str]] = [
    ("report-broken-divergence.png", SAMPLES / "broken-divergence", ["--at", "8"], "1100,1400"),
    (
        "report-charts.png",
        SAMPLES / "demo-001",
        ["--at", "10", "--chart", "spent.tokens", "--chart", "phase"],
        "1000,760",
    ),
]


def report_in_a_browser(name: str, run: Path, flags: list[str], size: str) -> Path | None:
    """``report --html`` of ``run``, as headless Chromium (Debian's
    ``chromium``) draws it; skipped, saying so, where there is none."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print(f"no chromium: {name} not redrawn")
        return None
    work = Path(tempfile.gettempdir()) / "replay-tui-shots"
    work.mkdir(parents=True, exist_ok=True)
    page = work / f"{Path(name).stem}.html"
    subprocess.run(
        [sys.executable, "-m", "replay_tui", "report", str(run), *flags, "--out", str(page)],
        check=True,
        capture_output=True,
    )
    shot = HERE / name
    subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={work / 'chromium'}",
            f"--window-size={size}", f"--screenshot={shot}", page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    return shot


async def samples_list() -> Path:
    """An Inspect log's samples, to pick one from."""
    from replay_tui.ui.screens.samples import SamplesApp

    app = SamplesApp(INSPECT / "failing.eval")
    async with app.run_test(size=(120, 12)) as pilot:
        await pilot.pause()
        path = app.save_screenshot(filename="inspect-samples.svg", path=str(HERE))
    return Path(path)


async def threads_list() -> Path:
    """A LangGraph database's threads, to pick one from (a subgraph under its thread)."""
    from replay_tui.formats.langgraph.listing import thread_rows
    from replay_tui.ui.screens.threads import ThreadsApp

    database = LANGGRAPH / "flow.sqlite"
    app = ThreadsApp(database, thread_rows(database))
    async with app.run_test(size=(140, 12)) as pilot:
        await pilot.pause()
        path = app.save_screenshot(filename="langgraph-threads.svg", path=str(HERE))
    return Path(path)


async def main() -> None:
    big_run(Path(tempfile.gettempdir()) / "replay-tui-shots" / "synth-2400")
    for name, run, size, keys, _ in SHOTS:
        print(await shoot(name, run, size, keys))
    print(await samples_list())
    print(await threads_list())
    for report in REPORTS:
        print(report_in_a_browser(*report))


if __name__ == "__main__":
    # the shots show the runs, not this machine's bookmarks of them
    with tempfile.TemporaryDirectory() as state:
        os.environ["XDG_STATE_HOME"] = state
        asyncio.run(main())
