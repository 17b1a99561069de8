"""Files on disk as a test leaves them."""

from __future__ import annotations

import os
from pathlib import Path


def make_read_only(root: Path) -> None:
    """Every file under ``root`` 0o444, every folder 0o555."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            (Path(dirpath) / name).chmod(0o444)
        Path(dirpath).chmod(0o555)
