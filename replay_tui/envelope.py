"""Names rules import (``from replay_tui.envelope import Event``), kept
where rules written before the subpackages find them: the envelope is
:mod:`replay_tui.formats.envelope`."""

from replay_tui.formats.envelope import Event, LineError, parse_line

__all__ = ["Event", "LineError", "parse_line"]
