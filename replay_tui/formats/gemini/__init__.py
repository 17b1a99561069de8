"""Gemini CLI sessions: what their records are (:mod:`.records`), their
lines as events (:mod:`.lines`), the older single-document form
(:mod:`.document`). Nothing is imported here: :mod:`replay_tui.formats.sessions`
tells a session by :mod:`.records` alone."""
