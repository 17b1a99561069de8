"""Where agent sessions live on this machine: Claude Code's and Codex's
stores, listed newest first (:mod:`.listing`), and their record counts
remembered between runs of ``replay-tui sessions`` (:mod:`.counts`)."""
