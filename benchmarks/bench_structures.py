"""Why the state store uses ``immutables``: keeping every version of a big dict.

    python benchmarks/bench_structures.py [--keys 125000] [--every 256]

A 1M-event agent run's state holds 125,000 calls, and the app keeps a version
of it every few hundred events. This inserts ``--keys`` small dicts one at a
time (a call each), keeping the version after every ``--every`` inserts, in:

- a plain dict, copied at each kept version (what full checkpoints cost);
- ``immutables.Map`` (a C HAMT; ``mutate()`` between kept versions);
- ``rpds.HashTrieMap`` (Rust HAMT, no batch API), if ``rpds-py`` is installed;
- a plain dict kept as JSON bytes (the old checkpoints), for reference.

It prints the time per insert and how much the process grew (peak RSS, each
structure in a fresh process, so memory a C or Rust library allocates counts),
each against the plain dict in the same run.
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import immutables
import orjson


def call(i: int) -> dict[str, Any]:
    return {"tool": "read_file", "status": "proposed", "attempt": i // 3, "cost": None}


def plain_copies(n: int, every: int) -> list[Any]:
    d: dict[str, Any] = {}
    kept: list[Any] = []
    for i in range(n):
        d[f"call-{i:06}"] = call(i)
        if i % every == 0:
            kept.append(dict(d))
    return kept


def json_copies(n: int, every: int) -> list[Any]:
    d: dict[str, Any] = {}
    kept: list[Any] = []
    for i in range(n):
        d[f"call-{i:06}"] = call(i)
        if i % every == 0:
            kept.append(orjson.dumps(d))
    return kept


def hamt(n: int, every: int) -> list[Any]:
    m: immutables.Map[str, Any] = immutables.Map()
    kept: list[Any] = []
    mutation = m.mutate()
    for i in range(n):
        mutation[f"call-{i:06}"] = call(i)
        if i % every == 0:
            m = mutation.finish()
            kept.append(m)
            mutation = m.mutate()
    return kept


def rpds_map(n: int, every: int) -> list[Any]:
    import rpds

    m = rpds.HashTrieMap()
    kept: list[Any] = []
    for i in range(n):
        m = m.insert(f"call-{i:06}", call(i))
        if i % every == 0:
            kept.append(m)
    return kept


def measure(name: str, n: int, every: int) -> tuple[float, float]:
    """(µs per insert, MiB the process grew by) for one structure, in a fresh
    process: resident memory, so C and Rust allocations count too."""
    out = subprocess.run(
        [sys.executable, __file__, "--one", name, "--keys", str(n), "--every", str(every)],
        capture_output=True,
        text=True,
        check=True,
    )
    us, mib = out.stdout.split()
    return float(us), float(mib)


def one(name: str, n: int, every: int) -> None:
    build = dict(BUILDERS)[name]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    kept = build(n, every)
    seconds = time.perf_counter() - t
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(seconds / n * 1e6, grown / 1024)
    del kept


BUILDERS: list[tuple[str, Callable[[int, int], list[Any]]]] = [
    ("plain dict, copied", plain_copies),
    ("plain dict as JSON", json_copies),
    ("immutables.Map", hamt),
    ("rpds.HashTrieMap", rpds_map),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=125_000)
    ap.add_argument("--every", type=int, default=256)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n, every = args.keys, args.every
    if args.one:
        one(args.one, n, every)
        return
    print(f"{n:,} inserts, a version kept every {every} ({n // every:,} versions)")
    print(f"{'structure':<22} {'µs/insert':>10} {'kept MiB':>10} {'vs plain (time, memory)':>26}")
    base: tuple[float, float] | None = None
    for name, _ in BUILDERS:
        if name.startswith("rpds") and importlib.util.find_spec("rpds") is None:
            print(f"{name:<22} (rpds-py is not installed)")
            continue
        us, mib = measure(name, n, every)
        if base is None:
            base = (us, mib)
        print(f"{name:<22} {us:>10.2f} {mib:>10.1f} {us / base[0]:>12.2f}x {mib / base[1]:>11.3f}x")


if __name__ == "__main__":
    main()
