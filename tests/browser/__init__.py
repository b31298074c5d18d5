"""Drive the real app in a real browser: the demo on 127.0.0.1 plus headless Debian Chromium.

Used by the browser test, and by the benchmarks (cold start) and `python -m bench screenshot`,
which reuse this driver rather than copy it. The folder is the browser tier (tests/tiers.py);
the driver is its package, so `from tests.browser import ...` serves both.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.runtime.child_server import end_process, free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
# The first page load takes 7-8 s on 2 cores; leave room for a busy machine.
PAGE_TIMEOUT_S = 60.0
# The chat box (assistant/page/ui/chat_box.html).
CHAT_INPUT = 'textarea[data-testid="memgateChatBox"]'
# The sidebar's memory header appears once the store and the gate have loaded.
APP_READY = 'section[data-testid="stSidebar"] :text("Memories (")'
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN")


def chromium_path() -> str | None:
    """Debian's chromium (or MEMGATE_CHROMIUM), or None when it is not installed."""
    for candidate in (os.environ.get("MEMGATE_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser_missing() -> str | None:
    """Why the browser run cannot happen here, or None when it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install playwright)"
    if chromium_path() is None:
        return "Debian's chromium is not installed (apt-get install -y chromium)"
    return None


@dataclass
class RunningApp:
    """A `streamlit run app.py` subprocess and where to reach it."""

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    started: float  # perf_counter when the process was launched

    def log_tail(self, lines: int = 40) -> str:
        """The end of the server's output, for failure messages."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def offline_env(memory_dir: Path) -> dict[str, str]:
    """The environment of an offline demo: no key, memories in `memory_dir`."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    env.pop("MEMGATE_GATE_MODE", None)
    env["MEMGATE_MEMORY_DIR"] = str(memory_dir)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Poll Streamlit's health endpoint until it answers "ok"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.1)
    raise TimeoutError(f"streamlit did not become healthy within {timeout:.0f} s")


@contextlib.contextmanager
def running_app(memory_dir: Path, env: dict[str, str] | None = None) -> Iterator[RunningApp]:
    """Start the app on 127.0.0.1 on a free port; stop it (and only it) afterwards."""
    port = free_port()
    log_path = memory_dir.parent / f"streamlit-{port}.log"
    memory_dir.parent.mkdir(parents=True, exist_ok=True)
    # What `memory-gate demo` runs: the browser checks the installed entry point too.
    command = [sys.executable, "-m", "assistant.cli", "demo", "--port", str(port)]
    with log_path.open("wb") as log:
        started = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=ROOT,  # this checkout's packages come first on the path
            env=env or offline_env(memory_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    app = RunningApp(f"http://127.0.0.1:{port}", process, log_path, started)
    try:
        wait_healthy(app.url, process, PAGE_TIMEOUT_S)
        yield app
    finally:
        end_process(process)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Headless Debian Chromium (a Playwright Browser), closed on the way out."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def browser_page(browser: Any, width: int = 1440, height: int = 900) -> Iterator[Any]:
    """A fresh page of `browser` in a context of its own: no cookies, storage or cache of
    another page, so the app gives it a new session."""
    context = browser.new_context(
        viewport={"width": width, "height": height}, device_scale_factor=1
    )
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_S * 1000)
        yield page
    finally:
        context.close()


@contextlib.contextmanager
def chromium_page(width: int = 1440, height: int = 900) -> Iterator[Any]:
    """A fresh page in a fresh headless Debian Chromium."""
    with chromium() as browser, browser_page(browser, width, height) as page:
        yield page


def wait_usable(page: Any) -> None:
    """Wait until the chat input is enabled and the app has loaded its memory and gate."""
    page.wait_for_selector(f"{CHAT_INPUT}:not([disabled])", state="visible")
    page.locator(APP_READY).first.wait_for(state="visible")


def wait_idle(page: Any) -> None:
    """Wait until no script run is in progress (Streamlit's "Running..." widget is gone)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !/running/i.test(document.querySelector('[data-testid=\"stStatusWidget\"]')"
        ".innerText)"
    )


def send(page: Any, message: str) -> None:
    """Type a message into the chat input and submit it."""
    box = page.locator(CHAT_INPUT)
    box.fill(message)
    box.press("Enter")


def send_burst(
    page: Any, messages: Sequence[str], gap_s: float, clicks: Set[str] = frozenset()
) -> None:
    """Send `messages` `gap_s` apart: typed, or by a click on the example button of that label."""
    for message in messages:
        if message in clicks:
            page.get_by_role("button", name=message, exact=True).click()
        else:
            send(page, message)
        page.wait_for_timeout(gap_s * 1000)


USER_MESSAGES = ".stChatMessage:has([data-testid=stChatMessageAvatarUser])"
WAITING = "waiting for the reply above"


def user_messages(page: Any) -> list[str]:
    """The user's messages shown on the page, in order (one-line messages)."""
    return [
        bubble.inner_text().strip().splitlines()[-1] for bubble in page.locator(USER_MESSAGES).all()
    ]


def wait_answered(page: Any, messages: Sequence[str], answer: Callable[[str], str]) -> None:
    """Wait until every message's answer is shown and nothing waits any more."""
    for message in messages:
        page.get_by_text(answer(message), exact=True).first.wait_for()
    page.get_by_text(WAITING).first.wait_for(state="detached")
    wait_idle(page)


@contextlib.contextmanager
def busy_cpu(processes: int = 3, limit_s: float = 900.0) -> Iterator[None]:
    """Saturate the CPU with `processes` busy loops, as a laptop writing a reply is.

    They are stopped on the way out, and each ends by itself after `limit_s` even if
    this process is killed first.
    """
    loop = f"import time\nend = time.monotonic() + {limit_s}\nwhile time.monotonic() < end: pass"
    loops: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(processes):
            loops.append(subprocess.Popen([sys.executable, "-c", loop]))
        yield
    finally:
        for process in loops:
            end_process(process)


BADGES = ".stChatMessage .stMarkdownBadge"


def badge_texts(page: Any, count: int) -> list[str]:
    """Wait for `count` decision badges and return their texts (icon ligatures included)."""
    badges = page.locator(BADGES)
    badges.nth(count - 1).wait_for(state="visible")
    return [badges.nth(i).inner_text() for i in range(badges.count())]


def two_demo_turns(
    page: Any, answer: str | re.Pattern[str] = "Alex Chen and I are having dinner"
) -> list[str]:
    """A skipped and a retrieved turn, drawn to the end (the README's picture); their badges.

    `answer`: text of the second reply to wait for (the offline responder's by default).
    """
    send(page, "What's 2+2?")
    badge_texts(page, 1)
    send(page, "When am I meeting Alex?")
    badges = badge_texts(page, 2)
    page.get_by_text(answer).first.wait_for()
    page.locator("[data-testid='stVegaLiteChart']").first.wait_for()
    page.evaluate(
        "for (const el of document.querySelectorAll('[data-testid=stMain], "
        "[data-testid=stAppScrollToBottomContainer]')) el.scrollTo(0, 0)"
    )
    page.wait_for_timeout(800)  # let the scroll and the chart's last frame settle
    return badges
