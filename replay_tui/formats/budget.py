"""``budget.json``: the limits the rules enforce (spec section 3)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay_tui.core import strict_json
from replay_tui.core.errors import RuleViolation

_LIMITS = {"max_attempts": int, "max_tool_calls": int, "max_cost": float}


@dataclass(frozen=True, slots=True)
class Budget:
    """Each limit is None when absent: unlimited."""

    max_attempts: int | None = None
    max_tool_calls: int | None = None
    max_cost: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _LIMITS if getattr(self, k) is not None}


def parse_budget(raw: bytes) -> Budget:
    """Budget from the bytes of budget.json; raises ``bad_budget``."""

    def bad(why: str) -> RuleViolation:
        return RuleViolation("bad_budget", f"budget.json {why}", "budget.json")

    try:
        data = strict_json.loads(raw)
    except ValueError as exc:
        raise bad(f"is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise bad("must be a JSON object")
    values: dict[str, Any] = {}
    for key, want in _LIMITS.items():
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"{key} must be a number, got {value!r}")
        if want is int and not isinstance(value, int):
            raise bad(f"{key} must be a whole number, got {value!r}")
        if value < 0 or value != value or value in (float("inf"), float("-inf")):
            raise bad(f"{key} must be a finite number >= 0, got {value!r}")
        values[key] = value
    return Budget(**values)


def load_budget(run_dir: Path) -> Budget:
    """Read ``<run>/budget.json`` if there is one (absent: no limits)."""
    path = run_dir / "budget.json"
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except FileNotFoundError:
        return Budget()
    except OSError as exc:
        why = "is a symlink: not read" if exc.errno == errno.ELOOP else exc.strerror
        raise RuleViolation("bad_budget", f"budget.json {why}", "budget.json") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RuleViolation("bad_budget", "budget.json is not a regular file", "budget.json")
        size = os.fstat(fd).st_size
        if size > 1 << 20:
            raise RuleViolation(
                "bad_budget",
                f"budget.json is {size:,} bytes; limits fit in far less",
                "budget.json",
            )
        raw = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    return parse_budget(raw)
