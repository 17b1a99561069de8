"""The state at every prefix against Gemini CLI's own loader, run live.

Where ``node`` is installed and ``@google/gemini-cli-core`` can be found
(``GEMINI_CORE_DIR``: a folder where ``npm install @google/gemini-cli-core``
was run), ``tests/fixtures/gemini-sessions/tools/gemini_oracle.mjs`` runs
``loadConversationRecord`` on every prefix of each fixture, and of a session
made here with every odd line the loader meets (lines that do not parse,
other JSON values, a rewind to an id not loaded, snapshots with repeated
ids, a resume's metadata with messages, tokens rewritten, a model changed);
the state after each line must equal what it returns. Skipped, saying why,
where either is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.engine.open import open_replay
from tests.conftest import ROOT
from tests.helpers.gemini import loader_record

FIXTURES = ROOT / "tests" / "fixtures" / "gemini-sessions"
ORACLE = FIXTURES / "tools" / "gemini_oracle.mjs"
NODE = shutil.which("node")
CORE = os.environ.get("GEMINI_CORE_DIR", "")
HAVE_CORE = bool(CORE) and (Path(CORE) / "node_modules" / "@google" / "gemini-cli-core").is_dir()

pytestmark = [
    pytest.mark.skipif(
        NODE is None, reason="node is not installed: Gemini CLI's loader cannot run"
    ),
    pytest.mark.skipif(
        not HAVE_CORE,
        reason="@google/gemini-cli-core not found: set GEMINI_CORE_DIR to a folder where "
        "`npm install @google/gemini-cli-core@0.61.0` was run",
    ),
]


def oracle(session: Path) -> dict[str, Any]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(ORACLE), str(session)],
        capture_output=True,
        check=True,
        timeout=300,
        env={**os.environ, "GEMINI_CORE_DIR": CORE},
        cwd=session.parent,
    )
    got: dict[str, Any] = orjson.loads(done.stdout)
    return got


def assert_same_as_loader(session: Path) -> int:
    """Every prefix's state equals the loader's record; the prefixes compared."""
    truth = oracle(session)
    # the script counts the lines that are not blank: line k's number in the file
    numbers = [i for i, raw in enumerate(session.read_bytes().split(b"\n"), 1) if raw.strip()]
    replay, _ = open_replay(str(session), fmt="gemini")
    try:
        replay.verify()
        assert replay.error is None, replay.error
        for prefix in truth["prefixes"]:
            line = numbers[prefix["k"] - 1]
            got = loader_record(replay.state_at(line))
            assert got == prefix["record"], f"{session.name}: after line {line}"
    finally:
        replay.close()
    return len(truth["prefixes"])


@pytest.mark.parametrize("session", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_fixture_equals_the_live_loader(session: Path) -> None:
    assert assert_same_as_loader(session) > 5


def odd_session() -> list[bytes]:
    """A real session's lines with every odd line Gemini CLI's loader meets."""
    real = (FIXTURES / "rewind-one.jsonl").read_bytes().splitlines()
    recs = [orjson.loads(r) for r in real]
    meta = recs[0]
    msgs = [r for r in recs if "id" in r]
    user, reply = msgs[0], msgs[1]
    other = {
        **reply,
        "id": "m-other",
        "model": "gemini-2.5-pro",
        "tokens": {"input": 5, "total": 5},
    }
    dump = orjson.dumps
    return [
        b'{"note": "not a Gemini line yet"}',
        *real[:6],
        b"{not json",
        b"5",
        b"[1, 2]",
        b"null",
        dump({**reply, "tokens": {**reply["tokens"], "output": 99, "total": 999}}),
        dump(other),
        dump({**other, "model": "gemini-2.5-flash"}),
        dump({**other, "tokens": {}}),
        dump({"$set": []}),
        dump({"$set": None}),
        dump({"$set": {"summary": "a summary", "directories": ["/x"], "kind": "sub"}}),
        dump({"id": "both", "type": "info", "content": "id and $set", "$set": {"summary": "no"}}),
        dump({"$rewindTo": "not-loaded-anywhere"}),
        dump(user),
        dump(
            {**meta, "startTime": "2026-12-06T11:00:00.000Z", "messages": [reply, user, {"x": 1}]}
        ),
        dump(
            {"$set": {"messages": [reply, {**reply, "content": "second copy"}, 7, {"id": 3}, user]}}
        ),
        dump({"$rewindTo": reply["id"]}),
        *real[6:],
        dump({"id": "tail", "type": "warning", "content": [{"text": "a"}, "b", {"x": 1}]}),
    ]


def test_odd_lines_equal_the_live_loader(tmp_path: Path) -> None:
    session = tmp_path / "session-odd.jsonl"
    session.write_bytes(b"\n".join(odd_session()) + b"\n")
    assert assert_same_as_loader(session) == len(odd_session())
