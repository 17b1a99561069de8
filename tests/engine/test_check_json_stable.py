"""``replay-tui check --json`` prints, byte for byte, what the engine printed before its rewrite.

The engine under ``replay_tui/`` is being rewritten. The rewrite must not change
any verdict byte: not the exit status, not a field, not a hash, not a message,
not the indentation. ``tests/fixtures/check_json/expected.json`` froze the
stdout and exit status of ``check --json`` (plain and ``--partial``, plus the
``--reducer`` a sample names in ``sample_runs/expected.json``) for every run
folder in ``sample_runs/``, every Temporal history in ``sample_runs/temporal/``,
every session file in ``sample_runs/agent-sessions/`` (sub-agents' transcripts
too) and every committed case in ``tests/corpus/cases/``. The corpus cases that only
exist when built (symlinks, FIFOs, /dev/zero, permissions, 10 MB lines) are not
covered here: ``tests/hostile/test_corpus.py`` checks their verdicts.

Each fixture key is ``<RUN> | <flags>``; the command is
``python -m replay_tui check <flags> <RUN>``, run from the repo root with the
relative path RUN, so the output holds no path that depends on where the repo
is cloned.

The fixtures must come from the code as it was before the rewrite (a pristine
checkout), never from the code under test. They were made before the state
store replaced the engine and held through it; they were regenerated since
when the built-in rules' source changed (``still_open``; the temporal rules'
updates accepted without their request), which changes ``rules_sha256`` alone,
the temporal rules' version (1.1.0, warnings for checks stricter than
Temporal), which changes their ``rules.version`` too, and the temporal
rules' initial state moved out of their class (under 500 lines), which
changes their ``rules_sha256`` alone:
every other byte was compared and equal each time. The agent sessions'
entries were added later, from a pristine checkout with those files copied
in, every entry before them byte for byte the same; their ``rules_sha256``
changed alone when the two session rules moved what they share into
``reducers/session_rules.py``, and again when the built-in rules gained
``call_of`` and ``call_facts`` (calls folded). The Claude Code entries
changed on purpose when a broken ``parentUuid`` chain became a finding, not
a stop: their state gained ``chain`` (``state_sha256``), the damaged sample
stops at ``illegal_transition`` where it stopped at ``bad_parent``, and a
sample with a broken chain was added; then again when the session rules'
state gained a resumed file's lineage, each compaction's summary and tokens
after it, and a Codex rollout's fork and parent thread; and their
``rules_sha256`` alone when the chain's words moved to ``reducers/resume.py``;
then when the Claude Code rules (2.0.0) came to keep only the calls in
flight and those answered whose results the model has not read, counts
per tool and the latest message
(``rules.version``, ``rules_sha256`` and ``state_sha256`` of the twelve
Claude Code entries, regenerated with ``--regenerate .`` from the new code
and compared field by field: no verdict, seq, message or exit moved), and
the Codex entries' ``rules_sha256`` alone when a ``spawn_agent`` output's
child thread came to be kept;
then every built-in rules' ``rules_sha256`` alone, once, when the digest came
to cover the modules of the rules package that the rules import (``base.py``,
what the session rules share, the otel rules' helpers) and, in the same
commit, the rules became packages (``reducers/temporal/``, ``claude_code/``,
``codex/``, ``sessions/``, ``otel_genai/``): regenerated from the new code and
compared line by line, no other line moved (a rules file of its own that
imports nothing beside it keeps the sha256 of its bytes); then every entry
gained ``rules_files`` (the files that digest covers, each with its sha256),
lines added and none changed;
and the corpus case ``huge-integer`` when integers past 64 bits came to be
read exactly (verified, where it was ``bad_json``), with every ``rules_sha256``
whose files changed for it (``base.py`` reads a fresh receipt exactly, the
codex and otel rules read JSON text inside a line exactly);
then the Claude Code and Codex entries when their state gained ``cost``
(what the calls cost, priced by ``reducers/pricing/``): ``state_sha256``,
``rules_sha256`` and ``rules_files`` changed and a ``prices`` field (the
price database and the user's file) was added, no verdict, seq or exit moved;
then those entries' ``rules_sha256`` and ``rules_files`` alone, when the
pricing package priced models with audio or image rates by its quick path
too and wrote a fraction of a cent with two significant digits (no state,
verdict or cost moved); then every entry's new ``line_core`` field (which
path proved the lines: written on the Python path, the native one's
``"native"`` read as it), every other byte the same; then every entry's new
``rules_core`` field (which rules proved the events: ``"python"``, the
native twin of the built-in agent_run rules' ``"native"`` read as it), a
line added and none changed; every other entry byte for byte the same.
Regenerate them, from the repo root, only on purpose (a deliberate change of
output):

    git worktree add /tmp/before HEAD && python tests/engine/test_check_json_stable.py --regenerate /tmp/before; git worktree remove --force /tmp/before
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "check_json" / "expected.json"
SEP = " | "


def load_expected() -> dict[str, dict[str, int | str]]:
    data: dict[str, dict[str, int | str]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def run_check(root: Path, key: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """Run the command a fixture key names, from ``root``, with ``root``'s package:
    (exit status, stdout, stderr)."""
    run, flags = key.split(SEP)
    out = subprocess.run(
        [sys.executable, "-m", "replay_tui", "check", *shlex.split(flags), run],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    return out.returncode, out.stdout, out.stderr


EXPECTED = load_expected() if FIXTURE.exists() else {}
#: The fixture is written on the Python path; the native line core gives
#: the same bytes but for the fields that name it (and the native rules,
#: where it runs the built-in agent_run rules).
_CORES = (b'  "line_core": "native",\n', b'  "line_core": "python",\n')
_RULES = (b'  "rules_core": "native",\n', b'  "rules_core": "python",\n')


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_check_json_is_byte_identical(key: str) -> None:
    want = EXPECTED[key]
    code, stdout, stderr = run_check(ROOT, key)
    stdout = stdout.replace(*_CORES, 1).replace(*_RULES, 1)
    assert stdout.decode("utf-8", "backslashreplace") == want["stdout"], stderr.decode(
        errors="replace"
    )
    assert stdout == str(want["stdout"]).encode("utf-8")  # the very bytes, not just the text
    assert code == want["exit"], stderr.decode(errors="replace")


def test_fixture_is_not_empty() -> None:
    assert len(EXPECTED) > 100


# -- regenerating the fixture ---------------------------------------------------


def keys_for(root: Path) -> list[str]:
    """Every (input, mode) to freeze, as fixture keys, for the checkout at ``root``."""
    samples = root / "sample_runs"
    runs = [
        f"sample_runs/{p.name}"
        for p in sorted(samples.iterdir())
        if p.is_dir()
        and p.name not in ("temporal", "agent-sessions", "traces")
        and not p.name.startswith("_")
    ]
    runs += [
        f"sample_runs/temporal/{p.name}" for p in sorted((samples / "temporal").glob("*.json"))
    ]
    sessions = samples / "agent-sessions"
    runs += [
        f"sample_runs/{p.relative_to(samples).as_posix()}"
        for p in sorted(sessions.rglob("*.jsonl") if sessions.is_dir() else ())
    ]
    cases = root / "tests" / "corpus" / "cases"
    runs += [f"tests/corpus/cases/{p.name}" for p in sorted(cases.iterdir()) if p.is_dir()]
    keys = [f"{run}{SEP}{flags}" for run in runs for flags in ("--json", "--json --partial")]
    named = json.loads((samples / "expected.json").read_text(encoding="utf-8"))
    for name, want in sorted(named.items()):
        if want.get("reducer"):
            reducer = shlex.quote(want["reducer"])
            for flags in (f"--json --reducer {reducer}", f"--json --partial --reducer {reducer}"):
                keys.append(f"sample_runs/{name}{SEP}{flags}")
    return keys


def regenerate(root: Path) -> int:
    root = root.resolve()
    probe = subprocess.run(
        [sys.executable, "-c", "import replay_tui; print(replay_tui.__file__)"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    )
    imported = Path(probe.stdout.strip()).resolve()
    if not imported.is_relative_to(root):
        print(f"replay_tui comes from {imported}, not from {root}", file=sys.stderr)
        return 2
    keys = keys_for(root)
    with ThreadPoolExecutor(max_workers=2) as pool:
        python = {"REPLAY_TUI_LINE_CORE": "python"}
        results = list(pool.map(lambda key: run_check(root, key, python), keys))
    expected = {
        key: {"exit": code, "stdout": stdout.decode("utf-8")}
        for key, (code, stdout, _) in zip(keys, results, strict=True)
    }
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(expected)} entries from {imported.parent} written to {FIXTURE}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--regenerate":
        sys.exit(f"usage: python {sys.argv[0]} --regenerate PRISTINE_CHECKOUT")
    sys.exit(regenerate(Path(sys.argv[2])))
