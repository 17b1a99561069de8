"""``python -m replay_tui`` is the same as the ``replay-tui`` command."""

from replay_tui.cli import main

if __name__ == "__main__":  # not when a second process of check's imports it
    raise SystemExit(main())
