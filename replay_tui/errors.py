"""Names rules import (``from replay_tui.errors import RuleViolation``),
kept where rules written before the subpackages find them: the errors are
:mod:`replay_tui.core.errors`. The built-in rules import them from here too,
so their source, and with it their ``rules_sha256``, stays as it was."""

from replay_tui.core.errors import (
    ERROR_CODES,
    CannotRun,
    ReplayError,
    RuleViolation,
    Warning_,
)

__all__ = ["ERROR_CODES", "CannotRun", "ReplayError", "RuleViolation", "Warning_"]
