"""A call's receipt in an agent's session: its result, as the session recorded it.

A run folder keeps each call's result in ``receipts/<call_id>.json``; a
Claude Code transcript or a Codex rollout keeps it in the line that answers
the call (a ``tool_result``, a ``*_output``). :meth:`Results.recorded_result`
finds that line for a call's request or its result (the rules say which
line, ``recorded_call``), and gives what the receipt pane shows of a receipt:
the result itself, where it is (``file:line``), its size and sha256 (of the
line's bytes). The line is read once (``pread``) and parsed once; the data is
the parsed record's own objects, never copied, and only the last result asked
for is kept.
"""

from __future__ import annotations

import hashlib
import threading
import zlib
from dataclasses import dataclass
from typing import Any

from replay_tui.core import strict_json
from replay_tui.core.words import plural
from replay_tui.engine.replay_core import LedgerChanged, Part, ReplayCore
from replay_tui.engine.seek import Seeking
from replay_tui.formats.envelope import Event


@dataclass(frozen=True, slots=True)
class RecordedResult:
    """A call of a session and its result as recorded, after some prefix."""

    call_id: str
    tool: str
    #: ``requested`` (no result yet in the prefix), ``ok``, ``error``, ...
    status: str
    input: str
    request_seq: int | None
    #: The line (seq) holding the result; None while it is not recorded.
    seq: int | None = None
    #: ``session.jsonl:21``: where the result is, as errors name lines.
    artifact: str | None = None
    size: int | None = None  # bytes of that line
    sha256: str | None = None  # of that line's bytes
    #: The result as recorded: Claude Code ``{"tool_result": <block>,
    #: "toolUseResult": <structured result>}``, Codex the output item.
    data: Any = None
    duration_s: float | None = None

    def record(self) -> tuple[str, Any]:
        """(title, JSON value) as the inspector shows a record beside an event."""
        if self.seq is None:
            where = f" at seq {self.request_seq}" if self.request_seq is not None else ""
            title = f"{self.tool} · no result recorded yet (requested{where})"
            return title, {
                "call_id": self.call_id,
                "tool": self.tool,
                "input": self.input,
                "status": self.status,
            }
        took = ""
        if self.duration_s is not None:
            d = self.duration_s
            took = f" · {d * 1000:.0f} ms" if abs(d) < 1 else f" · {d:.1f} s"
        size = plural(self.size or 0, "byte", sep=True)
        title = f"{self.tool} result · {self.artifact} · {size} · {self.status}{took}"
        return title, self.data


class Results(Part):
    """Receipts of a session's calls: their recorded results (see the module)."""

    def __init__(self, run: ReplayCore, seeking: Seeking) -> None:
        super().__init__(run)
        self.seeking = seeking
        self._last_result: tuple[tuple[str, int], tuple[int, str, Any]] | None = None
        self._results_lock = threading.Lock()

    def recorded_result(self, event: Event | None, n: int) -> RecordedResult | None:
        """The call ``event`` requests or answers, with its result as known
        after events 1..n (None: not a session, or no call at this event)."""
        run = self.run
        mapping = run.ledger.mapping
        hook = getattr(run.reducer, "recorded_call", None)
        if mapping is None or hook is None or event is None or not 0 <= n <= run.valid:
            return None
        found = run.rules_call.call_with_state(event.seq, hook, self.seeking.frozen_at(n), event)
        if not (isinstance(found, tuple) and len(found) == 2 and isinstance(found[1], dict)):
            return None
        cid, call = found
        seq = call.get("result_seq")
        request = call.get("seq")
        duration = call.get("duration_s")
        shown = RecordedResult(
            str(cid),
            str(call.get("tool")),
            str(call.get("status")),
            str(call.get("input", "")),
            request if type(request) is int else None,
            duration_s=duration if isinstance(duration, int | float) else None,
        )
        if type(seq) is not int or not 1 <= seq <= n:
            return shown
        size, digest, data = self._result_line(str(cid), seq, event)
        return RecordedResult(
            shown.call_id,
            shown.tool,
            shown.status,
            shown.input,
            shown.request_seq,
            seq,
            run.ledger.artifact(seq),
            size,
            digest,
            data,
            shown.duration_s,
        )

    def _result_line(self, cid: str, seq: int, event: Event) -> tuple[int, str, Any]:
        """(size, sha256, recorded result) of line ``seq``, read once."""
        run = self.run
        key = (cid, seq)
        with self._results_lock:
            last = self._last_result
        if last is not None and last[0] == key:
            return last[1]
        index = seq - 1
        raw = run.ledger.raw_line(index)
        if index < len(run._crcs) and zlib.crc32(raw) != run._crcs[index]:
            raise LedgerChanged(f"line {seq} changed since it was validated")
        rec = event.fields if event.seq == seq else strict_json.loads_written(raw)
        assert run.ledger.mapping is not None
        got = (
            len(raw),
            hashlib.sha256(raw).hexdigest(),
            run.ledger.mapping.result_data(rec, cid),
        )
        with self._results_lock:
            self._last_result = (key, got)
        return got
