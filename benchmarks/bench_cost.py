"""Our cost of Claude Code sessions beside ccusage's, and why they differ.

    python benchmarks/bench_cost.py [--ccusage "npx -y ccusage@18.0.11"] [FOLDER ...]

Each session file (default: tests/fixtures/agent-sessions/claude-code/*.jsonl
and, when present, ../shared/agent-sessions/claude-code/*.jsonl, each file
once by content) is copied into a project folder of its own under a
temporary CLAUDE_CONFIG_DIR (never ~/.claude), and ccusage is run there
with --offline (its bundled LiteLLM prices): ``session --json`` gives a
cost per project, so per file, with a breakdown per model.

Beside each file's two costs, two more isolate the causes:

- ``ours@cc-count``: our prices on ccusage's counting (every line with usage,
  less repeats of one message.id + requestId pair: a message streamed over
  lines without a requestId counts once per line);
- ``ours@5m``: our counting with every cache write at the 5-minute rate
  (ccusage knows no 1-hour rate).

ccusage@latest (20.x) needs a native binary the registry here does not
serve and 19.x needs Node 22: 18.0.11 is the last that runs on Node 20.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay_tui.formats.envelope import ts_seconds  # noqa: E402
from replay_tui.questions.usage import session_usage  # noqa: E402
from replay_tui.reducers import pricing  # noqa: E402
from replay_tui.reducers.claude_code.rules import cache_tokens  # noqa: E402

DEFAULT_FOLDERS = [
    ROOT / "tests" / "fixtures" / "agent-sessions" / "claude-code",
    ROOT.parent / "shared" / "agent-sessions" / "claude-code",
]


def session_files(folders: list[Path]) -> list[Path]:
    found: dict[str, Path] = {}
    for folder in folders:
        if folder.is_dir():
            for path in sorted(folder.glob("*.jsonl")):
                found.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return list(found.values())


def run_ccusage(command: str, files: dict[str, Path]) -> dict[str, Any]:
    """ccusage's ``session --json --offline`` over ``files`` (project name -> file)."""
    with tempfile.TemporaryDirectory() as home:
        for name, path in files.items():
            project = Path(home) / "projects" / name
            project.mkdir(parents=True)
            shutil.copy(path, project / path.name)
        env = dict(os.environ, CLAUDE_CONFIG_DIR=home, HOME=home, TZ="UTC")
        argv = [*shlex.split(command), "session", "--json", "--offline", "--timezone", "UTC"]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"ccusage failed ({done.returncode}): {done.stderr.strip()[:500]}")
        return json.loads(done.stdout)  # type: ignore[no-any-return]


def _line_tokens(usage: dict[str, Any], five_minute: bool) -> pricing.Tokens:
    counts = tuple(
        v if type(v) is int and v >= 0 else 0
        for v in (
            usage.get("input_tokens"),
            usage.get("output_tokens"),
            usage.get("cache_creation_input_tokens"),
            usage.get("cache_read_input_tokens"),
        )
    )
    return cache_tokens(counts, None if five_minute else usage.get("cache_creation"))  # type: ignore[arg-type]


def ours_on_ccusage_counting(path: Path) -> tuple[int, int]:
    """(micro-dollars, lines counted): ccusage's dedup (message.id with
    requestId), our prices, every cache write at the 5-minute rate."""
    seen: set[tuple[str, str]] = set()
    micros = lines = 0
    for raw in path.read_bytes().splitlines():
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) else None
        usage = msg.get("usage") if isinstance(msg, dict) else None
        if not isinstance(usage, dict) or rec.get("type") != "assistant":
            continue
        mid, rid = msg.get("id"), rec.get("requestId")
        if isinstance(mid, str) and isinstance(rid, str):
            if (mid, rid) in seen:
                continue
            seen.add((mid, rid))
        ts = rec.get("timestamp")
        at = ts_seconds(ts) if isinstance(ts, str) else None
        got = pricing.price(msg.get("model"), "anthropic", _line_tokens(usage, True), at)
        micros += got or 0
        lines += 1
    return micros, lines


def ours_at_five_minutes(path: Path) -> int:
    """Our counting (each message once, its last line), cache writes at the 5-minute rate."""
    last: dict[str, dict[str, Any]] = {}
    for n, raw in enumerate(path.read_bytes().splitlines()):
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) else None
        if (
            rec.get("type") == "assistant"
            and isinstance(msg, dict)
            and isinstance(msg.get("usage"), dict)
        ):
            last[msg.get("id") if isinstance(msg.get("id"), str) else f"line {n}"] = rec
    micros = 0
    for rec in last.values():
        ts = rec.get("timestamp")
        at = ts_seconds(ts) if isinstance(ts, str) else None
        tokens = _line_tokens(rec["message"]["usage"], True)
        micros += pricing.price(rec["message"].get("model"), "anthropic", tokens, at) or 0
    return micros


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--ccusage", default="npx -y ccusage@18.0.11")
    args = parser.parse_args()
    files = {f"p{i:02d}": p for i, p in enumerate(session_files(args.folders or DEFAULT_FOLDERS))}
    if not files:
        raise SystemExit("no Claude Code session files found")
    cc = {s["sessionId"]: s for s in run_ccusage(args.ccusage, files)["sessions"]}
    database = pricing.active().identity()["database"]
    print(f"prices: ours {database}; ccusage {args.ccusage} --offline")
    head = ("session file", "ours", "ccusage", "diff", "ours@cc-count", "ours@5m")
    print(
        f"{head[0]:<46} {head[1]:>9} {head[2]:>9} {head[3]:>8} {head[4]:>13} {head[5]:>9}"
        "  tokens ours/cc"
    )
    by_model: dict[str, list[float]] = {}
    sums = [0.0, 0.0, 0.0, 0.0]
    for name, path in files.items():
        usage = session_usage(path, subagents=False)
        total = usage.total()
        ours = total.micros / 1e6
        ccs = cc.get(name, {})
        theirs = float(ccs.get("totalCost", 0.0))
        cc_count, _ = ours_on_ccusage_counting(path)
        five = ours_at_five_minutes(path)
        our_tokens = sum(total.tokens)
        cc_tokens = int(ccs.get("totalTokens", 0))
        label = path.name if len(path.name) <= 46 else "…" + path.name[-45:]
        print(
            f"{label:<46} {ours:>9.4f} {theirs:>9.4f} {theirs - ours:>+8.4f} "
            f"{cc_count / 1e6:>13.4f} {five / 1e6:>9.4f}  {our_tokens:,}/{cc_tokens:,}"
        )
        for i, v in enumerate((ours, theirs, cc_count / 1e6, five / 1e6)):
            sums[i] += v
        for (_, model), part in usage.file.parts.items():
            by_model.setdefault(model, [0.0, 0.0])[0] += part.micros / 1e6
        for row in ccs.get("modelBreakdowns", []):
            by_model.setdefault(row["modelName"], [0.0, 0.0])[1] += float(row["cost"])
    print(
        f"{'total':<46} {sums[0]:>9.4f} {sums[1]:>9.4f} {sums[1] - sums[0]:>+8.4f} "
        f"{sums[2]:>13.4f} {sums[3]:>9.4f}"
    )
    print()
    print(f"{'model':<46} {'ours':>9} {'ccusage':>9} {'diff':>8}")
    for model, (ours, theirs) in sorted(by_model.items()):
        print(f"{model:<46} {ours:>9.4f} {theirs:>9.4f} {theirs - ours:>+8.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
