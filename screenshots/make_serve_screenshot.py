"""Regenerate serve-browser.png: `replay-tui serve sample_runs/demo-001` in
headless Chromium, after `j` nine times (the cursor on seq 10).

    python screenshots/make_serve_screenshot.py

Needs Debian's chromium (/usr/bin/chromium) and the test extra (Playwright);
the same steps as tests/cli/test_serve.py's browser test. Look at the picture
after.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tests.helpers.browser import browser_page, served, wait_for_screen  # noqa: E402

OUT = HERE / "serve-browser.png"


def main() -> int:
    with served(ROOT / "sample_runs" / "demo-001") as server, browser_page(1400, 800) as page:
        page.goto(server.url, wait_until="domcontentloaded")
        wait_for_screen(page, lambda s: "✓ verified" in s and "tool_allowed" in s)
        for _ in range(9):  # typed at once: the page gives the terminal the keyboard
            page.keyboard.press("j")
        wait_for_screen(page, lambda s: "seq 10 of 14" in s and "retrying" in s)
        page.wait_for_timeout(500)  # the state pane's last frame
        page.screenshot(path=str(OUT))
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
