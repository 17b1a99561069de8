"""The ``gemini`` rules (``--reducer gemini``): a Gemini CLI session's state
after each line, as Gemini CLI's own loader would give it (:mod:`.rules`,
with the loader's steps in :mod:`.loaded`)."""

from replay_tui.reducers.gemini.rules import REDUCER, GeminiRules

__all__ = ["REDUCER", "GeminiRules"]
