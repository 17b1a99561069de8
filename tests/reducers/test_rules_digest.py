"""``rules_sha256`` covers everything the rules run: the rules module and the
modules of their own that it imports (replay_tui/reducers/__init__.py,
replay_tui/core/sources.py), so a changed helper never passes for the same
rules."""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import LoadedReducer, load_reducer
from tests.conftest import ROOT, RunFactory, line

REDUCERS = ROOT / "replay_tui" / "reducers"


def by_hand(rules: LoadedReducer, base: Path) -> str:
    """The digest as ``sha256sum FILES | sha256sum`` gives it, from ``base``."""
    listing = "".join(
        f"{hashlib.sha256((base / rel).read_bytes()).hexdigest()}  {rel}\n"
        for rel in sorted(rules.rules_files)
    )
    return hashlib.sha256(listing.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "must_cover"),
    [
        ("claude_code", ["claude_code/rules.py", "sessions/rules.py", "sessions/resume.py"]),
        ("codex", ["codex/rules.py", "sessions/rules.py"]),
        ("otel_genai", ["otel_genai/" + m for m in ("turns.py", "spans.py", "tools.py")]),
        ("temporal", ["temporal/rules.py", "temporal/history.py", "temporal/words.py"]),
        ("agent_run", ["agent_run.py", "base.py"]),
    ],
)
def test_the_built_in_rules_digest_covers_the_modules_they_draw_on(
    name: str, must_cover: list[str]
) -> None:
    rules = load_reducer(name)
    covered = {rel.removeprefix("replay_tui/reducers/") for rel in rules.rules_files}
    assert set(must_cover) <= covered
    # not what loads or calls the rules
    assert "__init__.py" not in covered and not any(c.startswith("calling/") for c in covered)
    for rel, digest in rules.rules_files.items():
        assert hashlib.sha256((ROOT / rel).read_bytes()).hexdigest() == digest
    assert rules.rules_sha256 == by_hand(rules, ROOT)


def test_a_built_in_name_and_its_module_path_give_one_digest() -> None:
    for name in ("claude_code", "otel_genai", "temporal", "codex"):
        by_path = load_reducer(f"replay_tui.reducers.{name}:REDUCER")
        assert by_path.rules_sha256 == load_reducer(name).rules_sha256
        assert by_path.rules_files == load_reducer(name).rules_files


def test_the_guide_shows_the_digest_the_rules_have() -> None:
    shown = re.findall(r"# ([0-9a-f]{64})  -", (ROOT / "docs" / "rules.md").read_text())
    assert shown == [load_reducer("agent_run").rules_sha256]


@pytest.fixture
def forget_modules() -> Iterator[list[str]]:
    """Module names a test imports, dropped from Python's cache after it."""
    names: list[str] = []
    yield names
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            del sys.modules[name]


RULES_OF_A_PACKAGE = {
    "__init__.py": "",
    "rules.py": (
        "from replay_tui.reducers.refund import RefundRules\n"
        "class Worded(RefundRules):\n"
        "    name = 'worded'\n"
        "    def summary(self, state):\n"
        "        from .words import word\n"
        "        return word(super().summary(state))\n"
        "REDUCER = Worded()\n"
    ),
    "words.py": "def word(w):\n    return w.upper()\n",
    "unrelated.py": "X = 1\n",
}


def load_fresh(spec: str, names: list[str]) -> LoadedReducer:
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            del sys.modules[name]
    return load_reducer(spec)


def test_a_packages_helper_edited_changes_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_modules: list[str]
) -> None:
    pkg = tmp_path / "worded_rules"
    pkg.mkdir()
    for rel, text in RULES_OF_A_PACKAGE.items():
        (pkg / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_modules.append("worded_rules")
    spec = "worded_rules.rules:REDUCER"
    first = load_fresh(spec, forget_modules)
    assert sorted(first.rules_files) == [
        "worded_rules/__init__.py",
        "worded_rules/rules.py",
        "worded_rules/words.py",
    ]
    assert first.rules_sha256 == by_hand(first, tmp_path)
    (pkg / "unrelated.py").write_text("X = 2\n")
    assert load_fresh(spec, forget_modules).rules_sha256 == first.rules_sha256
    (pkg / "words.py").write_text("def word(w):\n    return w.lower()\n")
    assert load_fresh(spec, forget_modules).rules_sha256 != first.rules_sha256


def test_a_rules_files_helper_beside_it_is_digested_and_run_as_digested(
    tmp_path: Path,
    run_factory: RunFactory,
    monkeypatch: pytest.MonkeyPatch,
    forget_modules: list[str],
) -> None:
    folder = tmp_path / "my_rules"
    folder.mkdir()
    (folder / "rules.py").write_text(
        "from replay_tui.reducers.refund import RefundRules\n"
        "import refund_words\n"
        "class Worded(RefundRules):\n"
        "    def summary(self, state):\n"
        "        return refund_words.word(super().summary(state))\n"
        "REDUCER = Worded()\n"
    )
    (folder / "refund_words.py").write_text("def word(w):\n    return w.upper()\n")
    (folder / "notes.py").write_text("")
    monkeypatch.syspath_prepend(str(folder))  # as PYTHONPATH puts it
    forget_modules.append("refund_words")
    spec = f"{folder / 'rules.py'}:REDUCER"
    run = run_factory([line(1, "requested", payload={"amount": 5})])

    def state_word(rules: LoadedReducer) -> str | None:
        return Replay(locate_run(run), rules).verify().final_summary()[0]

    first = load_reducer(spec)
    assert sorted(first.rules_files) == ["refund_words.py", "rules.py"]
    assert state_word(first) == "WAITING"
    (folder / "notes.py").write_text("X = 1\n")
    assert load_reducer(spec).rules_sha256 == first.rules_sha256
    (folder / "refund_words.py").write_text("def word(w):\n    return w.lower() + '!'\n")
    again = load_reducer(spec)  # as the app loads edited rules again
    assert again.rules_sha256 != first.rules_sha256
    assert again.rules_sha256 == by_hand(again, folder)
    assert state_word(again) == "waiting!"  # the helper as digested, not as first imported


def test_a_rules_file_alone_keeps_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    rules = tmp_path / "rules.py"
    rules.write_text("from replay_tui.reducers.refund import REDUCER\n")
    loaded = load_reducer(f"{rules}:REDUCER")
    digest = hashlib.sha256(rules.read_bytes()).hexdigest()
    assert loaded.rules_sha256 == digest and loaded.rules_files == {"rules.py": digest}
