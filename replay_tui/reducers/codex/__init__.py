"""The ``codex`` rules (``--reducer codex``): an agent's turns and tool calls
from a Codex rollout file. They build on :mod:`replay_tui.reducers.sessions`,
shared with the ``claude_code`` rules; their ``rules_sha256`` covers it."""

from replay_tui.reducers.codex.rules import REDUCER, CodexRules

__all__ = ["REDUCER", "CodexRules"]
