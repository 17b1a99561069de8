"""The ``temporal`` rules (``--reducer temporal``): a Temporal workflow's state
after each history event (:mod:`.rules`), from what each event says
(:mod:`.history`)."""

from replay_tui.reducers.temporal.rules import REDUCER, TemporalRules

__all__ = ["REDUCER", "TemporalRules"]
