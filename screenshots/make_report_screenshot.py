"""Regenerate report-charts.png: the HTML report of demo-001 at seq 10 with
two charts (``--chart spent.tokens --chart phase``), as headless Chromium
draws it.

    python screenshots/make_report_screenshot.py

Needs Debian's chromium (/usr/bin/chromium). The page runs no script and
fetches nothing, so a plain ``--screenshot`` shows all of it. Look at the
picture after.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "report-charts.png"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        demo = str(ROOT / "sample_runs" / "demo-001")
        charts = ("--chart", "spent.tokens", "--chart", "phase")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "replay_tui",
                "report",
                demo,
                "--at",
                "10",
                *charts,
                "--html",
                "--out",
                str(page),
            ],
            check=True,
            cwd=ROOT,
        )
        subprocess.run(
            [
                "/usr/bin/chromium",
                *CHROMIUM_FLAGS,
                f"--user-data-dir={tmp}/profile",
                f"--screenshot={OUT}",
                "--window-size=1000,760",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
