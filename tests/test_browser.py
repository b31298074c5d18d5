"""One real-browser test: the demo on 127.0.0.1 (`memory-gate demo`), driven by Playwright.

Skipped (with the reason) when Chromium or Playwright is missing, unless
MEMGATE_REQUIRE_BROWSER=1 (CI), where a missing browser is a failure. It writes only to
its temporary folder: docs/screenshot.png is made by `python -m bench.screenshot`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.browser import (
    browser_missing,
    chromium_page,
    running_app,
    send,
    two_demo_turns,
    wait_usable,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser_ready() -> None:
    """Skip, or fail in CI, when the browser stack is not installed."""
    missing = browser_missing()
    if missing is None:
        return
    if os.environ.get("MEMGATE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"MEMGATE_REQUIRE_BROWSER=1 but {missing}")
    pytest.skip(missing)


def test_offline_demo_in_a_real_browser(browser_ready: None, tmp_path: Path) -> None:
    with chromium_page(width=1600, height=1040) as page, running_app(tmp_path / "memories") as app:
        try:
            page.goto(app.url)
            wait_usable(page)
            cold_start = time.perf_counter() - app.started
            print(f"\ncold start until the chat input is usable: {cold_start:.1f} s")

            first, second = two_demo_turns(page)
            assert "SKIPPED" in first and "RETRIEVED" in second

            # The same picture the README shows, into this test's own folder.
            shot = tmp_path / "screenshot.png"
            page.screenshot(path=str(shot))
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

            # User text is shown literally in the browser too.
            send(page, "**bold** <b>tag</b>")
            last_user = page.locator(".stChatMessage").nth(4)
            last_user.get_by_text("**bold** <b>tag</b>").wait_for()
            assert last_user.locator("strong, b").count() == 0
        except Exception:
            print(app.log_tail())
            raise


def test_messages_sent_in_a_burst_are_all_answered(browser_ready: None, tmp_path: Path) -> None:
    # Each message makes Streamlit stop the run that is answering the one before: none of
    # them may vanish. Five messages, each sent while the previous run is still going.
    burst = [f"What's {n}+{n}?" for n in range(1, 6)]
    with chromium_page() as page, running_app(tmp_path / "memories") as app:
        try:
            page.goto(app.url)
            wait_usable(page)
            for message in burst:
                send(page, message)
                page.wait_for_timeout(150)
            answers = page.locator(".stChatMessage .stMarkdownBadge")
            answers.nth(len(burst) - 1).wait_for(state="visible")
            page.get_by_text("waiting for the reply above").wait_for(state="detached")
            users = [
                page.locator(".stChatMessage").nth(i).inner_text()
                for i in range(0, 2 * len(burst), 2)
            ]
            assert [u.strip().splitlines()[-1] for u in users] == burst  # in order, once each
            assert answers.count() == len(burst)
            for n in range(1, 6):
                page.get_by_text(f"{n}+{n} = {2 * n}").first.wait_for()
        except Exception:
            print(app.log_tail())
            raise
