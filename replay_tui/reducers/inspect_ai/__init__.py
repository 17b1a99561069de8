"""The ``inspect_ai`` rules (``--reducer inspect_ai``): an Inspect AI sample's
state after each event (:mod:`.rules`), its JSON Patches applied
(:mod:`.patch`)."""

from replay_tui.reducers.inspect_ai.rules import REDUCER, InspectRules

__all__ = ["REDUCER", "InspectRules"]
