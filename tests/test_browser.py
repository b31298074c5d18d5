"""One real-browser test: `streamlit run` on 127.0.0.1, driven by Playwright with Debian Chromium.

Skipped (with the reason) when Chromium or Playwright is missing, unless
MEMGATE_REQUIRE_BROWSER=1 (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bench.app_bench import (
    ROOT,
    browser_missing,
    chromium_page,
    running_app,
    send,
    wait_usable,
)

pytestmark = pytest.mark.browser
SCREENSHOT = ROOT / "docs" / "screenshot.png"
BADGES = ".stChatMessage .stMarkdownBadge"


@pytest.fixture(scope="module")
def browser_ready() -> None:
    """Skip, or fail in CI, when the browser stack is not installed."""
    missing = browser_missing()
    if missing is None:
        return
    if os.environ.get("MEMGATE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"MEMGATE_REQUIRE_BROWSER=1 but {missing}")
    pytest.skip(missing)


def _badge_texts(page: object, count: int) -> list[str]:
    """Wait for `count` decision badges and return their texts (icon ligatures included)."""
    badges = page.locator(BADGES)  # type: ignore[attr-defined]
    badges.nth(count - 1).wait_for(state="visible")
    return [badges.nth(i).inner_text() for i in range(badges.count())]


def test_offline_demo_in_a_real_browser(browser_ready: None, tmp_path: Path) -> None:
    with chromium_page(width=1600, height=1040) as page, running_app(tmp_path / "memories") as app:
        try:
            page.goto(app.url)
            wait_usable(page)
            cold_start = time.perf_counter() - app.started
            print(f"\ncold start until the chat input is usable: {cold_start:.1f} s")

            send(page, "What's 2+2?")
            first = _badge_texts(page, 1)
            assert len(first) == 1 and "SKIPPED" in first[0]

            send(page, "When am I meeting Alex?")
            both = _badge_texts(page, 2)
            assert len(both) == 2 and "RETRIEVED" in both[1]
            page.get_by_text("Alex Chen and I are having dinner").first.wait_for()

            # The README's picture: both turns and their badges, once the chart has drawn.
            page.locator("[data-testid='stVegaLiteChart']").first.wait_for()
            page.evaluate(
                "for (const el of document.querySelectorAll('[data-testid=stMain], "
                "[data-testid=stAppScrollToBottomContainer]')) el.scrollTo(0, 0)"
            )
            page.wait_for_timeout(800)
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT))

            # User text is shown literally in the browser too.
            send(page, "**bold** <b>tag</b>")
            last_user = page.locator(".stChatMessage").nth(4)
            last_user.get_by_text("**bold** <b>tag</b>").wait_for()
            assert last_user.locator("strong, b").count() == 0
        except Exception:
            print(app.log_tail())
            raise
