"""Following an Inspect AI sample while its eval runs.

Inspect writes a sample's member into the ``.eval`` zip (rewriting the
archive) when the sample completes, and a ``.json`` log whole at the eval's
end: a sample is never there in part. So following one waits until it is
there and readable, then converts it whole, as a cold open does; until then
the ledger is empty and each look (every poll of the live app) tries again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from replay_tui.core.errors import CannotRun
from replay_tui.formats.inspect import open_sample
from replay_tui.formats.ledger import ConvertedLedger, Ledger


class SampleToCome(ConvertedLedger):
    """A sample of a log being written: empty until the sample is in the log."""

    def __init__(self, source: Path, selector: str | None, *, cache_size: int = 4096) -> None:
        self._selector = selector
        self._digest = ""
        super().__init__(source, iter(()), "", cache_size=cache_size)
        self._lines = None  # nothing to convert until the sample is there
        self.loaded = False

    def scan_chunks(self) -> Iterator[tuple[int, list[bytes]]]:
        yield from Ledger.scan_chunks(self)
        if self.loaded:
            return
        try:
            sample = open_sample(self.path, self._selector)
            lines = list(sample.lines)
        except CannotRun:
            return  # not written yet, or being rewritten: the next look tries again
        with self._convert_lock:
            for chunk in lines:
                self._write(chunk)
        self._digest = sample.sha256
        self.loaded = True
        yield from Ledger.scan_chunks(self)

    def sha256(self) -> str:
        return self._digest
