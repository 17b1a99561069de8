"""Inspect AI eval logs (``.eval`` zips and ``.json`` documents): each
sample is a run of its own, its events converted to envelope lines as the
ledger is scanned (:mod:`.convert`), read one sample at a time from the log
(:mod:`.log`, :mod:`.archive`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from replay_tui.core import strict_json
from replay_tui.formats.inspect.convert import (
    RECORD,
    envelope_lines,
    events_of,
    sample_run_id,
)
from replay_tui.formats.inspect.log import (
    FORMAT,
    InspectLog,
    SampleRef,
    looks_like_log,
    split_selector,
)

__all__ = [
    "FORMAT",
    "RECORD",
    "InspectLog",
    "SampleRef",
    "SampleSource",
    "looks_like_log",
    "open_sample",
    "split_selector",
]


@dataclass
class SampleSource:
    """One sample, read and ready to convert."""

    ref: SampleRef
    lines: Iterator[bytes]
    sha256: str
    events: int


def open_sample(path: Path, selector: str | None) -> SampleSource:
    """The sample ``selector`` (``ID[:EPOCH]``) of the log at ``path``; a log
    with a single sample needs none. :class:`CannotRun` in one line otherwise."""
    from replay_tui.core.errors import CannotRun

    log = InspectLog(path)
    try:
        if selector is None:
            if not log.samples:
                status = log.header().get("status")
                said = f" (status {status})" if isinstance(status, str) else ""
                raise CannotRun(f"{path}: an Inspect log with no sample in it{said}")
            if len(log.samples) != 1:
                raise CannotRun(
                    f"{path}: an Inspect log of {len(log.samples)} samples: name one with "
                    f"--sample ID[:EPOCH] ({log.listing()})"
                )
            ref = log.samples[0]
        else:
            ref = log.find(selector)
        raw = log.raw_sample(ref)
        sample = log.sample(ref, raw)
        header = log.header() if log.kind == "eval" else {"eval": log.header().get("eval")}
        if raw is None:
            raw = strict_json.dumps(sample)
        digest = hashlib.sha256(raw).hexdigest()
        del raw
    finally:
        log.close()
    run_id = sample_run_id(header, sample)
    total = len(events_of(sample)) + 1
    return SampleSource(ref, envelope_lines(sample, run_id), digest, total)
