"""Kept for scripts written before the layout in subpackages: the engine
is :mod:`replay_tui.engine.replay` now."""

from replay_tui.engine.replay import Pending, Replay, Step, open_ledger, verify, why_not_follow

__all__ = ["Pending", "Replay", "Step", "open_ledger", "verify", "why_not_follow"]
