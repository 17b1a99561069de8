"""``python -m replay_tui`` is the same as the ``replay-tui`` command."""

from replay_tui.cli import main

raise SystemExit(main())
