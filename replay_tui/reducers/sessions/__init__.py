"""What the rules of two agents' session files share (``claude_code`` and
``codex``): the session's state and its words (:mod:`.rules`), and a resumed
or forked session's lineage (:mod:`.resume`)."""
