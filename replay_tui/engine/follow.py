"""Following a growing ledger: receipts not written yet, and rewrites.

While following, a line whose receipt file is not there yet is held back
(``pending``), not failed; :meth:`Following.retry_pending` lets it try
again when a file arrives, and :meth:`Following.stop_following` returns to
strict rules. A file that was rewritten under the reader is found by the
checksums of the lines already validated.
"""

from __future__ import annotations

import zlib

from replay_tui.engine.replay_core import Part
from replay_tui.formats.ledger import LedgerRewritten


class Following(Part):
    """What only a growing ledger needs: held-back lines and rewrite detection."""

    def stop_following(self) -> None:
        """From now on the ledger is judged as complete: strict rules again."""
        run = self.run
        run.following = False
        run.ctx.following = False
        run.ledger.stop_growing()
        if run.pending is not None:
            run.receipts.forget(run.pending.call_id)
            run.pending = None

    def retry_pending(self) -> None:
        """A file arrived: let the line waiting for its receipt try again."""
        run = self.run
        if run.pending is not None:
            run.receipts.forget(run.pending.call_id)
            run.pending = None

    def find_rewrite(self) -> LedgerRewritten | None:
        """Whether any byte already read changed (rehashing what was read,
        O(bytes read): call it from a worker), and if so where: the first
        validated line whose checksum differs now, or that the file shrank
        (as the reader's own cheap check would say, whichever sees it first)."""
        run = self.run
        if not run.ledger.prefix_changed():
            return None
        size = run.ledger.file_size()
        if size < run.ledger.indexed_end:
            return LedgerRewritten(size, "the file shrank")
        return self.locate_rewrite(LedgerRewritten(0, "bytes already read changed"))

    def locate_rewrite(self, exc: LedgerRewritten) -> LedgerRewritten:
        """Where history changed, when the ledger could only say that it did
        (an edit in place, same size): the first validated line whose
        checksum differs now. O(file), and only after a rewrite."""
        run = self.run
        if exc.offset:
            return exc
        for index in range(len(run._crcs)):
            if zlib.crc32(run.ledger.raw_line(index)) != run._crcs[index]:
                start = run.ledger.line_span(index)[0]
                return LedgerRewritten(start, f"line {index + 1} changed")
        return exc
