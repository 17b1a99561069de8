"""``replay_report.json``: a verdict anyone can recompute (spec section 5).

Canonical JSON (sorted keys, no timestamps, no absolute paths): the same run
and rules give the same bytes on any machine, so two reports can be compared
field by field.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from replay_tui import READER_VERSION
from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.words import plural
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import JSONL, RunPaths
from replay_tui.reducers import pricing
from replay_tui.state import canonical

REPORT_FIELDS = (
    "run_id",
    "events",
    "receipts",
    "state",
    "state_sha256",
    "events_sha256",
    "reader_version",
    "line_core",
    "rules_core",
    "rules",
    "rules_sha256",
    "rules_files",
    "partial",
    "error",
)


def build_report(replay: Replay, *, partial: bool = False) -> dict[str, Any]:
    """The report of a finished replay.

    ``events`` counts the events of the valid prefix (all of them when the
    run verifies). With an error, strict mode gives no state (``state`` and
    ``state_sha256`` null: a replay that stopped proves no final state);
    partial mode gives the valid prefix's state and says ``partial: true``.
    """
    give_state = replay.error is None or partial
    word, digest = replay.final_summary() if give_state else (None, None)
    return (
        {
            "run_id": replay.run_id,
            "events": replay.valid,
            "receipts": replay.receipts.count(),
            "state": word,
            "state_sha256": digest,
            "events_sha256": replay.ledger.sha256(),
            "reader_version": READER_VERSION,
            # which path proved the lines: the answers are the same on both
            "line_core": replay.line_core,
            # which rules proved the events: the built-in ones' native twin or Python's
            "rules_core": replay.rules_core,
            "rules": {"name": replay.reducer.name, "version": replay.reducer.version},
            "rules_sha256": replay.rules.rules_sha256,
            "rules_files": replay.rules.rules_files,
            "partial": bool(partial and replay.error is not None),
            "error": replay.error.to_json() if replay.error else None,
        }
        | ({"compressed": replay.ledger.compressed} if replay.ledger.compressed else {})
        | (
            # the state's cost depends on the prices as it does on the rules
            {"prices": pricing.active().identity()}
            if getattr(replay.reducer, "priced", False)
            else {}
        )
    )


def report_bytes(report: dict[str, Any]) -> bytes:
    """Canonical bytes of a report, with a final newline."""
    return canonical.dumps_pretty(report) + b"\n"


def refuse_inside_run(paths: RunPaths, place: Path) -> None:
    """Raise :class:`CannotRun` if ``place`` is the ledger or (for a run
    folder) anywhere inside the run folder: a run is evidence, and nothing
    is ever written there. Symlinks are resolved on both sides."""
    target = place.resolve()
    if target == paths.events.resolve():
        raise CannotRun(f"{place}: that is the run's ledger; refusing to write the report there")
    if paths.format == JSONL:
        run = paths.dir.resolve()
        if target == run or target.is_relative_to(run):
            raise CannotRun(
                f"{place}: inside the run folder {paths.dir}; a report is never written there "
                "(the run is evidence): choose a path outside it"
            )


def protected(paths: RunPaths) -> list[Path]:
    """What :func:`replay_tui.engine.report.write_atomic` must never replace."""
    return [paths.events, paths.dir] if paths.format == JSONL else [paths.events]


def write_atomic(path: Path, data: bytes, *, protect: list[Path] | None = None) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder and a rename.

    Refuses to replace any file in ``protect`` (the ledger, receipts): a
    report must never overwrite evidence.
    """
    target = path.resolve()
    for p in protect or []:
        try:
            if target == p.resolve() or (p.is_dir() and target.is_relative_to(p.resolve())):
                raise CannotRun(f"refusing to write the report over {p}")
        except OSError:
            continue
    if target.exists() and not target.is_file():
        # never rename over a device, FIFO or folder (e.g. --out /dev/null)
        raise CannotRun(f"{path}: not a regular file; refusing to replace it")
    folder = target.parent
    if not folder.is_dir():
        raise CannotRun(f"{path}: no such folder for the report")
    tmp = write_temp(folder, data, path)
    try:
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise CannotRun(f"{path}: cannot write the report ({exc.strerror})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_temp(folder: Path, data: bytes, name: Path) -> str:
    """``data`` in a new temp file in ``folder``, synced, readable as the umask
    allows (a report is for sharing, not 0600): the caller renames it into
    place. Raises :class:`CannotRun` naming ``name``."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".replay_report.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise CannotRun(f"{name}: cannot write there ({exc.strerror})") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise CannotRun(f"{name}: cannot write the report ({exc.strerror})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def load_report(path: Path) -> dict[str, Any]:
    """Read a report for comparison; raises :class:`CannotRun` if unreadable."""
    if path.exists() and not path.is_file():  # a FIFO would block the read forever
        raise CannotRun(f"{path}: not a regular file")
    try:
        data = strict_json.loads_written(path.read_bytes())
    except FileNotFoundError:
        raise CannotRun(f"{path}: no such file") from None
    except OSError as exc:
        raise CannotRun(f"{path}: {exc.strerror}") from None
    except orjson.JSONDecodeError as exc:
        raise CannotRun(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CannotRun(f"{path}: not a report (not a JSON object)")
    return data


#: Fields that say how a report was made, not what the run is: two reports
#: of the same run and rules differ in nothing else, so ``compare`` skips them.
HOW_MADE = frozenset({"line_core", "rules_core"})


def compare_reports(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """Fields that differ, in the spec's order, then any unknown fields
    (not those that only say how each was made: :data:`HOW_MADE`)."""
    keys = [k for k in REPORT_FIELDS if k not in HOW_MADE]
    keys += sorted((set(a) | set(b)) - set(REPORT_FIELDS))
    return [(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)]


def is_migration(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Different rules deriving a different state: shown side by side, never
    merged. Rules that failed (an error, no state) derive nothing: that is not
    a migration."""
    if a.get("state") is None or b.get("state") is None:
        return False
    return a.get("rules_sha256") != b.get("rules_sha256") and a.get("state") != b.get("state")


def human_summary(name: str, replay: Replay, report: dict[str, Any]) -> str:
    """What ``check`` prints for one run: the verdict line, then details."""
    rules = f"{replay.reducer.name} {replay.reducer.version}"
    receipts = report["receipts"]
    lines = []
    err = replay.error
    if err is None:
        lines.append(
            f"{name}: verified: {plural(report['events'], 'event')}, "
            f"{plural(receipts, 'receipt')}, state {report['state']} ({rules})"
        )
        still = replay.still_open()
        if still:
            lines.append(f"  still open: {'; '.join(still)}")
        lines.extend(f"  {note}" for note in replay.notes())
    else:
        lines.append(f"{name}: FAILED {err.one_line()}")
        if err.artifact:
            lines.append(f"  artifact: {err.artifact}")
        prefix = f"  valid prefix: {plural(replay.valid, 'event')}"
        if report["partial"]:
            prefix += f", state {report['state']} (partial)"
        lines.append(prefix)
        lines.append(f"  rules: {rules}")
    if replay.warning_count:
        lines.append(f"  {plural(replay.warning_count, 'warning')}:")
        for w in replay.warnings[:20]:
            where = f"seq {w.seq}: " if w.seq is not None else ""
            lines.append(f"    {w.code}: {where}{w.message}")
        if replay.warning_count > 20:
            lines.append(f"    ... and {replay.warning_count - 20} more")
    return "\n".join(lines)
