"""What the app's workers tell it (messages up): plain dataclasses, each
naming the replay or question it is about, so an answer about a replay no
longer shown is dropped."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from replay_tui.engine.replay import Replay
from replay_tui.handover.bookmarks import Bookmarks
from replay_tui.questions.across import PathChange
from replay_tui.questions.condition import Condition, StatePath
from replay_tui.views.runview import LineView


@dataclass
class Progress(Message):
    """Validation read this far. Progress of the same replay still waiting
    in the queue is superseded by the newer one: a big run posts one every
    2,048 lines, and the screen needs only the latest."""

    replay: Replay
    lines: int
    fraction: float

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Progress) and message.replay is self.replay


@dataclass
class Advanced(Message):
    """The ledger was read up to its current end (and judged, unless live)."""

    replay: Replay
    #: Events validated when the pass ended.
    valid: int


@dataclass
class AdvanceDone(Message):
    replay: Replay


@dataclass
class Rewritten(Message):
    """History already read changed under us: start again from scratch."""

    replay: Replay
    why: str


@dataclass
class VerifyDone(Message):
    """A verification pass over what was read ended."""

    replay: Replay


@dataclass
class AdvanceFailed(Message):
    replay: Replay
    why: str


@dataclass
class RulesReloaded(Message):
    replay: Replay
    difference: int | None
    #: The session's swaps when the reload began (see ``RunSession.swaps``).
    swaps: int


@dataclass
class RulesFailed(Message):
    why: str
    #: The session's swaps when the reload began.
    swaps: int


@dataclass
class WatchChanged(Message):
    """A watch started or stopped."""


@dataclass
class StatusChanged(Message):
    """A piece of the status line changed (and nothing else on screen)."""


@dataclass
class CompareChanged(Message):
    """What compare mode shows moved on (``differences``: and where A and B part)."""

    differences: bool


@dataclass
class MarksChanged(Message):
    """Bookmarks were loaded or changed: the timeline rows that carry one."""

    rows: frozenset[int]


@dataclass
class StuckChanged(Message):
    """Rules (not built in) have been inside one call for seconds, or no longer."""

    stuck: bool


@dataclass
class Notice(Message):
    """Something to tell the person, from a worker (a toast)."""

    text: str
    severity: str = "information"
    #: None: the app's usual time.
    timeout: float | None = None


@dataclass
class FirstViewShown(Message):
    """The panes drew their first line view: the reader may have the machine back."""


@dataclass
class ViewReady(Message):
    index: int
    view: LineView


@dataclass
class TurnFound(Message):
    """Where the condition turns true next (or before, for N)."""

    condition: Condition
    seq: int
    wrapped: bool


@dataclass
class TurnsReady(Message):
    """Every seq in 0..until at which the condition turns true."""

    condition: Condition
    seqs: list[int]
    until: int
    seconds: float


@dataclass
class WatchFound(Message):
    """More changes of the watched path (``done``: the scan reached ``until``)."""

    path: StatePath
    changes: list[PathChange]
    done: bool
    until: int
    seconds: float
    #: The watch it is for (the pane's count of watches started and stopped).
    watch: int = 0


@dataclass
class OtherSideDone(Message):
    b: Replay
    why: str


@dataclass
class Differences(Message):
    b: Replay
    indexes: list[int]


@dataclass
class BookmarksLoaded(Message):
    ledger: Path
    bookmarks: Bookmarks


@dataclass
class FilterReady(Message):
    query: str
    found: array[int]
