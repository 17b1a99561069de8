"""The ``parentUuid`` chain in a Claude Code session's state, and what it
means for ``claude --resume`` (see :mod:`replay_tui.formats.chain`): the
``chain`` the rules keep, and the words ``check`` and the status line say.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.formats.chain import BROKEN
from replay_tui.reducers.base import StateView

if TYPE_CHECKING:
    from replay_tui.envelope import Event


#: Breaks of the chain kept in the state (all are counted in ``breaks_total``).
BREAKS_KEPT = 100


def note_chain(chain: dict[str, Any], event: Event) -> None:
    """The record's place in the ``parentUuid`` chain (see
    :mod:`replay_tui.formats.chain`): counted, a break noted with what it
    costs, and for a message of the main conversation, what ``claude
    --resume`` from it would load."""
    rec = event.payload
    main = rec.get("isSidechain") is not True
    if main:
        chain["records"] += 1
    walk = getattr(event, "chain", None)
    if event.chain_why == BROKEN and walk is not None:  # type: ignore[attr-defined]
        chain["breaks_total"] += 1
        if len(chain["breaks"]) < BREAKS_KEPT:
            chain["breaks"].append(
                {"seq": event.seq, "parent": rec.get("parentUuid"), "drops": walk.before}
            )
    for child in getattr(event, "mended", ()):
        for brk in chain["breaks"]:
            if brk["seq"] == child:
                brk["mended_at"] = event.seq
    if main and walk is not None and rec.get("type") in ("user", "assistant"):
        chain["resume"] = {
            "leaf": event.seq,
            "from": walk.start,
            "stops": walk.stops,
            "loads": walk.loads,
            "drops": walk.before if walk.stops == "break" else 0,
            "compacted": walk.before if walk.stops == "compaction" else 0,
        }


def session_in_file(state: StateView) -> str | None:
    """In a file that holds several sessions (resumed under new ids):
    which one this prefix is in."""
    lineage = state["session"].get("lineage") or []
    if len(lineage) < 2:
        return None
    last = lineage[-1]
    return f"session {len(lineage)} in this file: {last['id'][:8]}… from line {last['from']:,}"


def resume_notes(state: StateView) -> list[str]:
    """What ``claude --resume`` of the last message would load, when the
    chain it walks back stops short of the session's start."""
    resume = state.get("chain", {}).get("resume")
    if not resume:
        return []
    leaf, start = resume["leaf"], resume["from"]
    loads = f"loads {resume['loads']:,} records (lines {start:,}..{leaf:,})"
    if resume["stops"] == "break":
        return [
            f"claude --resume from the last message (line {leaf:,}) {loads}: the chain "
            f"breaks at line {start:,}, and the {resume['drops']:,} records before it "
            "drop out of the conversation"
        ]
    if resume["stops"] == "compaction":
        return [
            f"claude --resume from the last message (line {leaf:,}) {loads}, from the "
            f"compaction at line {start:,}: its summary stands for the "
            f"{resume['compacted']:,} records before it"
        ]
    return []
