"""The README's picture, docs/screenshot.png: a skipped and a retrieved turn in Chromium.

    python -m bench screenshot [--out docs/screenshot.png]

`make bench` runs it too. The demo runs as `make demo` does with no key (on the built-in
local model when it is installed, else offline), on fresh memories in a temporary folder,
so the picture never shows this machine's own memories.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from tests.browser import (
    browser_missing,
    chromium_page,
    offline_env,
    running_app,
    two_demo_turns,
    wait_usable,
)

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "docs" / "screenshot.png"
SIZE = (1600, 1040)


def take(out: Path = SCREENSHOT) -> Path:
    """Drive the demo through two turns and save the page as a PNG at `out`."""
    from assistant.runtime.model_file import default_model_installed

    local = default_model_installed()
    with tempfile.TemporaryDirectory() as tmp:
        env = offline_env(Path(tmp) / "memories")
        env["MEMGATE_LOCAL_MODEL"] = "" if local else "off"
        # The real model's words vary; the memory it must quote does not.
        answer = re.compile("Nopa|Thursday") if local else "Alex Chen and I are having dinner"
        _shoot(out, Path(tmp) / "memories", env, answer)
    return out


def _shoot(out: Path, memory_dir: Path, env: dict[str, str], answer: str | re.Pattern[str]) -> None:
    with chromium_page(*SIZE) as page, running_app(memory_dir, env) as app:
        try:
            page.goto(app.url)
            wait_usable(page)
            two_demo_turns(page, answer)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        except Exception:
            print(app.log_tail(), file=sys.stderr)
            raise


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench screenshot --help`)."""
    parser.add_argument("--out", type=Path, default=SCREENSHOT)


def command(args: argparse.Namespace) -> int:
    """Command line: write the screenshot, or say why the browser cannot run here."""
    missing = browser_missing()
    if missing:
        print(f"error: {missing}", file=sys.stderr)
        return 1
    print(f"wrote {take(args.out)}")
    return 0
