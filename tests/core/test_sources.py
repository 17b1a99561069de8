"""The files a module runs, found by reading its imports, and their digest
(replay_tui/core/sources.py): what ``rules_sha256`` is."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay_tui.core.sources import Scope, covered, manifest


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/rules.py": (
        "import pkg.plain\n"
        "from . import near\n"
        "from .sub.deep import FACT\n"
        "from pkg import named\n"
        "def apply():\n"
        "    from pkg.late import later\n"
        "    return later()\n"
    ),
    "pkg/plain.py": "import os\n",
    "pkg/near.py": "from .far import X\n",
    "pkg/far.py": "X = 1\n",
    "pkg/named.py": "",
    "pkg/late.py": "def later():\n    return 2\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "FACT = 3\n",
    "pkg/unrelated.py": "Y = 4\n",
    "other/__init__.py": "",
}


def test_a_package_covers_every_module_it_imports_transitively(tmp_path: Path) -> None:
    write(tmp_path, PACKAGE)
    got = covered(tmp_path / "pkg" / "rules.py", Scope(tmp_path.resolve(), "pkg"))
    assert sorted(got.files) == [
        "pkg/__init__.py",
        "pkg/far.py",  # through near.py
        "pkg/late.py",  # imported inside a function
        "pkg/named.py",
        "pkg/near.py",
        "pkg/plain.py",
        "pkg/rules.py",
        "pkg/sub/__init__.py",
        "pkg/sub/deep.py",
    ]
    lines = "".join(f"{h}  {p}\n" for p, h in sorted(got.files.items()))
    assert got.sha256 == hashlib.sha256(lines.encode()).hexdigest()


def test_a_helpers_edit_changes_the_digest_an_unrelated_file_does_not(tmp_path: Path) -> None:
    write(tmp_path, PACKAGE)
    scope = Scope(tmp_path.resolve(), "pkg")
    start = tmp_path / "pkg" / "rules.py"
    before = covered(start, scope).sha256
    (tmp_path / "pkg" / "unrelated.py").write_text("Y = 5\n")
    (tmp_path / "other" / "__init__.py").write_text("Z = 1\n")
    assert covered(start, scope).sha256 == before
    (tmp_path / "pkg" / "far.py").write_text("X = 2\n")  # two imports away
    assert covered(start, scope).sha256 != before


def test_one_file_is_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    write(tmp_path, {"rules.py": "import json\nfrom os import path\n", "json.txt": ""})
    got = covered(tmp_path / "rules.py", Scope(tmp_path.resolve()))
    digest = hashlib.sha256((tmp_path / "rules.py").read_bytes()).hexdigest()
    assert got.files == {"rules.py": digest} and got.sha256 == digest


def test_a_rules_folder_covers_the_modules_beside_it_it_imports(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "rules.py": "import helpers\nfrom lib.words import w\nfrom . import nothing\n",
            "helpers.py": "",
            "lib/__init__.py": "",
            "lib/words.py": "from . import more\n",
            "lib/more.py": "",
            "notes.py": "",
        },
    )
    got = covered(tmp_path / "rules.py", Scope(tmp_path.resolve()))
    assert sorted(got.files) == [
        "helpers.py",
        "lib/__init__.py",
        "lib/more.py",
        "lib/words.py",
        "rules.py",
    ]


def test_imports_in_every_kind_of_block_count(tmp_path: Path) -> None:
    blocks = (
        "try:\n    import a_try\nexcept ImportError:\n    import a_except\n"
        "else:\n    import a_else\nfinally:\n    import a_finally\n"
        "if False:\n    pass\nelse:\n    import a_if_else\n"
        "class C:\n    import a_class\n"
        "    async def m(self):\n        async with x:\n            import a_async_with\n"
        "for _ in ():\n    while True:\n        import a_loop\n"
        "match 1:\n    case 1:\n        import a_case\n"
        "x = 1; import a_after_semicolon\n"
    )
    names = [
        "a_try", "a_except", "a_else", "a_finally", "a_if_else", "a_class",
        "a_async_with", "a_loop", "a_case", "a_after_semicolon",
    ]  # fmt: skip
    write(tmp_path, {"rules.py": blocks, **{f"{n}.py": "" for n in names}, "a_not.py": ""})
    got = covered(tmp_path / "rules.py", Scope(tmp_path.resolve()))
    assert sorted(got.files) == sorted([*(f"{n}.py" for n in names), "rules.py"])


def test_skipped_files_and_folders_are_not_covered(tmp_path: Path) -> None:
    write(tmp_path, PACKAGE)
    root = tmp_path.resolve()
    scope = Scope(root, "pkg", frozenset({root / "pkg" / "__init__.py"}), (root / "pkg" / "sub",))
    got = covered(tmp_path / "pkg" / "rules.py", scope)
    assert "pkg/__init__.py" not in got.files and "pkg/sub/deep.py" not in got.files
    assert "pkg/near.py" in got.files


def test_a_helper_that_does_not_parse_is_digested_not_followed(tmp_path: Path) -> None:
    write(
        tmp_path, {"rules.py": "import broken\n", "broken.py": "import deeper\n)(", "deeper.py": ""}
    )
    got = covered(tmp_path / "rules.py", Scope(tmp_path.resolve()))
    assert sorted(got.files) == ["broken.py", "rules.py"]


def test_the_bytes_given_are_digested_not_the_file(tmp_path: Path) -> None:
    write(tmp_path, {"rules.py": "import helpers\n", "helpers.py": ""})
    got = covered(tmp_path / "rules.py", Scope(tmp_path.resolve()), b"X = 1\n")
    assert got.files == {"rules.py": hashlib.sha256(b"X = 1\n").hexdigest()}


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="no sha256sum here")
def test_sha256sum_recomputes_the_digest(tmp_path: Path) -> None:
    write(tmp_path, PACKAGE)
    got = covered(tmp_path / "pkg" / "rules.py", Scope(tmp_path.resolve(), "pkg"))
    out = subprocess.run(
        ["sha256sum", *got.files], cwd=tmp_path, capture_output=True, check=True
    ).stdout
    assert hashlib.sha256(out).hexdigest() == got.sha256


@given(
    st.dictionaries(
        st.text(st.sampled_from("ab/_.é \\\n"), min_size=1),
        st.text("0123456789abcdef", min_size=64, max_size=64),
        min_size=1,
    )
)
def test_the_manifest_is_one_line_a_file_sorted_and_reversible(files: dict[str, str]) -> None:
    """As sha256sum writes it: a name with a backslash or a newline escaped
    and its line marked with a leading backslash."""
    lines = manifest(files).split("\n")
    assert lines.pop() == ""
    back = []
    for line in lines:
        digest, _, path = line.removeprefix("\\").partition("  ")
        if line.startswith("\\"):
            path = path.replace("\\\\", "\0").replace("\\n", "\n").replace("\0", "\\")
        back.append((path, digest))
    assert back == sorted(files.items())
