"""``replay-tui usage LOG`` for Inspect AI logs: the tokens of each sample
and of the whole log, by model, as the log's summaries record them
(``model_usage``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from replay_tui.cli.options import out
from replay_tui.core import strict_json
from replay_tui.core.words import plural
from replay_tui.formats.inspect import looks_like_log
from replay_tui.views.inspect_samples import SampleRow, log_totals, sample_rows

_SHORT = {
    "input_tokens": "input",
    "output_tokens": "output",
    "total_tokens": "total",
    "input_tokens_cache_read": "cache read",
    "input_tokens_cache_write": "cache write",
    "reasoning_tokens": "reasoning",
}


def split_logs(paths: list[str]) -> tuple[list[Path], list[str]]:
    """The Inspect logs among ``paths``, and the rest."""
    logs = [Path(p) for p in paths if Path(p).is_file() and looks_like_log(Path(p))]
    named = {str(p) for p in logs}
    return logs, [p for p in paths if p not in named]


def _figures(tokens: dict[str, int]) -> str:
    parts = [f"{_SHORT[k]} {v:,}" for k, v in tokens.items() if k != "total_tokens" and v]
    return f"{tokens.get('total_tokens', 0):,} tokens" + (f" ({', '.join(parts)})" if parts else "")


def print_log_usage(path: Path) -> None:
    """The log's tokens, then a line per sample, then by model."""
    rows = sample_rows(path)
    total, by_model = log_totals(rows)
    out(f"{path.name}: Inspect AI log, {plural(len(rows), 'sample')}: {_figures(total)}")
    width = max([len(r.key) for r in rows] + [6])
    out(f"  {'sample':<{width}}  {'input':>10}  {'output':>10}  {'total':>10}  error")
    for row in rows:
        t = row.tokens
        out(
            f"  {row.key:<{width}}  {t.get('input_tokens', 0):>10,}  "
            f"{t.get('output_tokens', 0):>10,}  {row.total:>10,}  {row.error}"
        )
    for model, tokens in sorted(by_model.items()):
        out(f"  {model}: {_figures(tokens)}")


def _row_json(row: SampleRow) -> dict[str, Any]:
    return {
        "sample": row.key,
        "id": row.id,
        "epoch": row.epoch,
        "tokens": row.tokens,
        "by_model": row.by_model,
        "error": row.error or None,
    }


def log_usage_json(path: Path) -> dict[str, Any]:
    rows = sample_rows(path)
    total, by_model = log_totals(rows)
    return {
        "log": str(path),
        "samples": [_row_json(r) for r in rows],
        "tokens": total,
        "by_model": by_model,
    }


def logs_usage(logs: list[Path], as_json: bool, after: bool = False) -> int:
    """Inspect logs' usage printed, alone (``as_json``: one JSON document) or
    ``after`` what was printed of sessions and traces."""
    if as_json:
        body = {"inspect_logs": [log_usage_json(p) for p in logs]}
        sys.stdout.buffer.write(strict_json.dumps(body, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    for number, log in enumerate(logs):
        if after or number:
            out("")
        print_log_usage(log)
    return 0
