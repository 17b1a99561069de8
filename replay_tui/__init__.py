"""replay-tui: strict replay of event-sourced runs, state at every prefix.

The core (ledger, receipts, reducers, replay, diff, report) is plain Python and
imports no textual; only :mod:`replay_tui.ui` does.
"""

__version__ = "0.1.0"

#: Version of the envelope reader; goes into every report as ``reader_version``.
READER_VERSION = f"replay-tui/{__version__} envelope-v1"
