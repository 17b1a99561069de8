"""The error vocabulary of strict replay (spec section 4).

A :class:`ReplayError` is the first inconsistency of a history; a
:class:`Warning_` is something worth showing that proves nothing wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Every error code of the spec, in the order the spec lists them.
ERROR_CODES: tuple[str, ...] = (
    "bad_json",
    "bad_encoding",
    "blank_line",
    "bad_envelope",
    "seq_gap",
    "seq_duplicate",
    "mixed_run_ids",
    "unknown_kind",
    "unsupported_version",
    "bad_parent",
    "bad_call_id",
    "missing_receipt",
    "receipt_name_mismatch",
    "receipt_tampered",
    "bad_budget",
    "illegal_transition",
    "budget_exceeded",
    "divergence",
    "reducer_error",
    "truncated_line",
)

#: Warning codes: shown to the user, never a reason to stop. The spec's
#: five, then the findings of the agent sessions' line checks.
WARNING_CODES: tuple[str, ...] = (
    "orphan_receipt",
    "ts_backwards",
    "no_final_newline",
    "empty_ledger",
    "rule_warning",
    "broken_chain",
    "chain_order",
    "chain_loop",
)

#: Every code the engine and the sources can report, errors then warnings:
#: what ``check --fail-on`` accepts (a test scans the code base so that no
#: code is reported that is not here).
KNOWN_CODES: tuple[str, ...] = ERROR_CODES + WARNING_CODES


@dataclass(frozen=True, slots=True)
class ReplayError:
    """The first inconsistency: where it is, what it is, and which file shows it."""

    code: str
    message: str
    seq: int | None = None
    line: int | None = None
    kind: str | None = None
    artifact: str | None = None
    #: Python traceback for ``reducer_error`` (shown in the app, not in reports).
    traceback: str | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The spec's error object ``{seq, line, kind, code, message, artifact}``."""
        return {
            "seq": self.seq,
            "line": self.line,
            "kind": self.kind,
            "code": self.code,
            "message": self.message,
            "artifact": self.artifact,
        }

    def one_line(self) -> str:
        """One human line: ``at seq 7, line 7, tool_finished: missing_receipt: ...``."""
        where = []
        if self.seq is not None:
            where.append(f"seq {self.seq}")
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.kind is not None:
            where.append(self.kind)
        place = "at " + ", ".join(where) if where else "before the first event"
        return f"{place}: {self.code}: {self.message}"


@dataclass(frozen=True, slots=True)
class Warning_:
    """Something odd but legal (an orphan receipt, time going backwards)."""

    code: str
    message: str
    seq: int | None = None
    line: int | None = None
    artifact: str | None = None


class RuleViolation(Exception):
    """Raised by a reducer (or the receipt rules) when an event breaks a rule.

    Anything else a reducer raises is a bug in the rules: ``reducer_error``.
    """

    def __init__(self, code: str, message: str, artifact: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.artifact = artifact


class CannotRun(Exception):
    """The command cannot run at all (no such folder, bad arguments): exit 2."""
