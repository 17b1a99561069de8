"""The command line: ``replay-tui`` and its commands (``check``, ``state``,
``when``, ``history``, ``report``, ``diff``, ``compare``, and the app)."""

from replay_tui.cli.commands import main

__all__ = ["main"]
