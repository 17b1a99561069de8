"""A 100 MB Inspect AI ``.eval`` log against an ``events.jsonl`` of the same size.

    python benchmarks/bench_inspect.py [--mb 100] [--repeat 1] [--jobs 2]

Generates (deterministically) an ``.eval`` log of about --mb megabytes: the
``parallel`` sample of the calculator fixture (tool calls, a ToolError, store
events, a score, pooled model inputs) again and again under new ids, each with
a long question of random words (so it compresses as text does), members
deflated. Beside it, in the same run, a generated ``events.jsonl`` of the same
size on disk (``agent_run`` rules), the baseline every source is measured
against.

Prints, for each: ``check`` of the whole (every sample of the log, --jobs
processes), ``check`` of one sample (what opening one costs: the zip's member
list, one member read), and their peak RSS.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from benchmarks.bench_scale import generate, median_run  # noqa: E402

PY = sys.executable
TEMPLATE = ROOT / "tests" / "fixtures" / "inspect-logs" / "generated" / "calculator.eval"
WORDS = [
    "tool",
    "store",
    "model",
    "score",
    "epoch",
    "sample",
    "patch",
    "event",
    "span",
    "state",
    "answer",
    "token",
]


def _template() -> tuple[dict[str, bytes], dict[str, object]]:
    """The template log's members but its samples, and the parallel:1 sample."""
    from replay_tui.formats.inspect import InspectLog

    log = InspectLog(TEMPLATE)
    try:
        sample = log.sample(log.find("parallel:1"))
    finally:
        log.close()
    with zipfile.ZipFile(TEMPLATE) as zf:
        others = {}
        for name in zf.namelist():
            if not name.startswith("samples/") and name not in ("summaries.json",):
                others[name] = _read(zf, name)
    return others, sample


def _read(zf: zipfile.ZipFile, name: str) -> bytes:
    from replay_tui.formats.inspect.archive import Archive

    archive = Archive(Path(str(zf.filename)))
    try:
        return archive.read(name)
    finally:
        archive.close()


def _replace(value: object, old: str, new: str) -> object:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, old, new) for k, v in value.items()}
    return value


def write_log(path: Path, megabytes: int) -> int:
    """The log at ``path``; returns its number of samples."""
    others, sample = _template()
    question = "Add in parallel, and divide."
    rng = random.Random(1)
    summaries = []
    count = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in others.items():
            zf.writestr(name, data)
        while path.stat().st_size < megabytes * 1_000_000:
            count += 1
            words = " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(6000))
            one = _replace(sample, question, f"{question} {words}")
            assert isinstance(one, dict)
            one["id"] = f"s{count}"
            zf.writestr(f"samples/s{count}_epoch_1.json", orjson.dumps(one))
            summaries.append({"id": f"s{count}", "epoch": 1, "model_usage": one["model_usage"]})
            zf.fp.flush()  # type: ignore[union-attr]
        zf.writestr("summaries.json", orjson.dumps(summaries))
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    log = args.workdir / f"inspect-{args.mb}mb.eval"
    if not log.exists():
        samples = write_log(log.with_suffix(".tmp"), args.mb)
        log.with_suffix(".tmp").rename(log)
    else:
        samples = len(zipfile.ZipFile(log).namelist()) - 4
    # an events.jsonl of the same size: agent_run events, about 155 bytes each
    ledger = generate(args.workdir, f"ledger-{args.mb}mb", args.mb * 1_000_000 // 155)
    cli = [PY, "-m", "replay_tui", "check", "--jobs", str(args.jobs)]
    rows = []
    for label, target in (
        ("events.jsonl", str(ledger)),
        (f".eval, {samples:,} samples", str(log)),
        (".eval, one sample", f"{log}#s{samples // 2}"),
    ):
        seconds, rss, out = median_run([*cli, target], args.repeat)
        assert (
            "verified" in out and "FAILED" not in out and " 0 could not" in out + " 0 could not"
        ), out
        size = (Path(target) / "events.jsonl").stat().st_size if Path(target).is_dir() else 0
        rows.append((label, size or log.stat().st_size, seconds, rss))
    print(f"median of {args.repeat} run(s), check --jobs {args.jobs}")
    print(f"{'what':<26}{'MB':>8}{'check s':>10}{'RSS MiB':>10}")
    for label, size, seconds, rss in rows:
        print(f"{label:<26}{size / 1e6:>8.1f}{seconds:>10.2f}{rss:>10.0f}")


if __name__ == "__main__":
    main()
