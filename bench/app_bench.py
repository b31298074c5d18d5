"""The real app's cold start in a real browser: the demo plus headless Chromium (Playwright).

Used by `make bench`; the browser driver is the browser test's own (tests/browser/):

    python -m bench app            # prints one JSON object
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from pathlib import Path

from tests.browser import APP_READY, CHAT_INPUT, browser_missing, chromium_page, running_app


def measure_startup(memory_dir: Path | None = None) -> dict[str, float]:
    """Seconds from `streamlit run` to: chat input shown, and app ready to answer."""
    with contextlib.ExitStack() as stack:
        if memory_dir is None:
            memory_dir = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "memories"
        # Start the browser first: its own launch is not the app's cold start.
        page = stack.enter_context(chromium_page())
        app = stack.enter_context(running_app(memory_dir))
        page.goto(app.url)
        page.wait_for_selector(f"{CHAT_INPUT}:not([disabled])", state="visible")
        input_shown = time.perf_counter() - app.started
        page.locator(APP_READY).first.wait_for(state="visible")
        ready = time.perf_counter() - app.started
        return {"chat_input_shown_s": round(input_shown, 2), "cold_start_s": round(ready, 2)}


def measure_cold_start(memory_dir: Path | None = None) -> float:
    """Seconds from `streamlit run` until the chat input is usable in headless Chromium."""
    # "Usable" means a message sent now is answered at once: the input is enabled and the
    # store and gate have loaded (the input itself is drawn a little earlier).
    return measure_startup(memory_dir)["cold_start_s"]


def command(args: argparse.Namespace) -> int:
    """Print the cold-start measurement as JSON."""
    missing = browser_missing()
    if missing:
        print(json.dumps({"error": missing}))
        return 1
    print(json.dumps(measure_startup()))
    return 0
