"""The ``claude_code`` rules (``--reducer claude_code``): a Claude Code
session's state after each record (:mod:`.rules`), reading each record with
:mod:`.reading`. They build on :mod:`replay_tui.reducers.sessions`, shared
with the ``codex`` rules; their ``rules_sha256`` covers it."""

from replay_tui.reducers.claude_code.reading import is_prompt
from replay_tui.reducers.claude_code.rules import REDUCER, ClaudeCodeRules

__all__ = ["REDUCER", "ClaudeCodeRules", "is_prompt"]
