"""An Inspect AI log's samples as a person looks them over: id, epoch,
score, tokens, error, as the log's summaries say (no sample's events are
read). The sample picker's rows and ``usage LOG``'s figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay_tui.formats.inspect import InspectLog

#: The token figures counted, as Inspect names them in ``model_usage``.
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_cache_read",
    "input_tokens_cache_write",
    "reasoning_tokens",
)


@dataclass(frozen=True, slots=True)
class SampleRow:
    """One sample of a log, from its summary."""

    key: str
    id: str
    epoch: int
    #: ``scorer=value`` for each score, or "".
    score: str
    #: Tokens by figure (:data:`TOKEN_FIELDS`), summed over its models.
    tokens: dict[str, int] = field(default_factory=dict)
    #: Tokens by model, each by figure.
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The error's message, or the limit hit, or "".
    error: str = ""

    @property
    def total(self) -> int:
        return self.tokens.get("total_tokens", 0)


def _score_text(scores: Any) -> str:
    if not isinstance(scores, dict):
        return ""
    said = []
    for name, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        said.append(f"{name}={value}")
    return " ".join(said)


def _usage(model_usage: Any) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    total: dict[str, int] = {}
    by_model: dict[str, dict[str, int]] = {}
    for model, usage in (model_usage or {}).items() if isinstance(model_usage, dict) else ():
        if not isinstance(usage, dict):
            continue
        mine = by_model.setdefault(str(model), {})
        for name in TOKEN_FIELDS:
            value = usage.get(name)
            if type(value) is int:
                mine[name] = mine.get(name, 0) + value
                total[name] = total.get(name, 0) + value
    return total, by_model


def _error_text(summary: dict[str, Any]) -> str:
    error = summary.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "error")
    if isinstance(error, str) and error:
        return error
    limit = summary.get("limit")
    if isinstance(limit, dict):
        return f"{limit.get('type')} limit"
    if isinstance(limit, str) and limit:
        return f"{limit} limit"
    return ""


def sample_rows(path: Path) -> list[SampleRow]:
    """The samples of the log at ``path``, in its order; :class:`CannotRun` if unreadable."""
    log = InspectLog(path)
    try:
        summaries = log.summaries()
        rows = []
        for ref in log.samples:
            summary = summaries.get(ref.key)
            if summary is None:  # no summary written (yet): the sample itself says
                summary = log.sample(ref)
            tokens, by_model = _usage(summary.get("model_usage"))
            rows.append(
                SampleRow(
                    ref.key,
                    str(ref.id),
                    ref.epoch,
                    _score_text(summary.get("scores")),
                    tokens,
                    by_model,
                    _error_text(summary),
                )
            )
        return rows
    finally:
        log.close()


def log_totals(rows: list[SampleRow]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Tokens over every sample, and by model."""
    total: dict[str, int] = {}
    by_model: dict[str, dict[str, int]] = {}
    for row in rows:
        for name, value in row.tokens.items():
            total[name] = total.get(name, 0) + value
        for model, usage in row.by_model.items():
            mine = by_model.setdefault(model, {})
            for name, value in usage.items():
                mine[name] = mine.get(name, 0) + value
    return total, by_model
