"""``check --fail-on CODE``: only codes the engine and the sources can
report, from the one list of them (``KNOWN_CODES``), which a scan of the
code base keeps whole."""

from __future__ import annotations

import ast
import re

import pytest

from replay_tui.core.errors import ERROR_CODES, KNOWN_CODES, WARNING_CODES
from tests.conftest import DEMO, ROOT, SAMPLES
from tests.helpers.cli import run_cli

CHAIN = SAMPLES / "agent-sessions" / "claude-code-broken-chain.jsonl"

#: What reports a code: its first argument (or, for a finding, the first
#: item of the tuple appended to ``findings``) is the code.
EMITTERS = frozenset(
    {
        "bad",
        "RuleViolation",
        "LineError",
        "ReplayError",
        "ReceiptProblem",
        "Warning_",
        "_warn",
        "_fail",
        "_unreadable",
    }
)


def _emitted() -> dict[str, str]:
    """Every code literal the package reports, with where it is."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "replay_tui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if name == "append" and isinstance(func, ast.Attribute):
                owner = func.value
                owned = owner.attr if isinstance(owner, ast.Attribute) else ""
                if owned != "findings" or not isinstance(first, ast.Tuple) or not first.elts:
                    continue
                first = first.elts[0]
            elif name not in EMITTERS:
                continue
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if not re.fullmatch(r"[a-z]+(_[a-z]+)*", first.value):
                    continue  # a message (a local helper's first argument), not a code
                found.setdefault(first.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_known_codes_are_every_code_the_code_base_reports() -> None:
    emitted = _emitted()
    assert {"broken_chain", "chain_loop", "chain_order", "ts_backwards", "divergence"} <= set(
        emitted
    )
    unknown = {code: where for code, where in emitted.items() if code not in KNOWN_CODES}
    assert unknown == {}
    assert set(KNOWN_CODES) - set(emitted) == set()  # none stale
    assert len(set(KNOWN_CODES)) == len(ERROR_CODES) + len(WARNING_CODES)


@pytest.mark.parametrize(
    ("word", "hint"),
    [
        ("broken-chain", "did you mean broken_chain?"),
        ("Broken_Chain", "did you mean broken_chain?"),
        ("ts_backward", "did you mean ts_backwards?"),
        ("nonsense", "known codes:"),
    ],
)
def test_an_unknown_code_is_refused_with_the_closest_one(
    word: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", "--fail-on", word, str(CHAIN))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"unknown code {word!r}" in err and hint in err
    assert "broken_chain" in err and "divergence" in err and "or any" in err
    code, out, err = run_cli(capsys, "check", "--fail-on", word, str(DEMO), str(CHAIN))
    assert code == 2 and out == ""  # several runs: refused before any is checked


def test_a_known_code_still_fails_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", "--fail-on", "broken_chain", str(CHAIN))
    assert code == 1 and "of a code --fail-on names (broken_chain)" in out
    code, _, _ = run_cli(capsys, "check", "--fail-on", "chain_loop", str(CHAIN))
    assert code == 0
    code, _, _ = run_cli(capsys, "check", "--fail-on", "any", str(CHAIN))
    assert code == 1
