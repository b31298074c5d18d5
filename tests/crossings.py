"""Crossings: a product file entered again while it is still on the stack, another between.

A file that calls out and is then called back before it returns (a callback into the
page, a decorator that lives elsewhere, a method handed down as a function) makes a path
hard to follow. `crossings()` records every call into the product's own files, per
thread, and keeps each such route (tests/integration/test_app.py runs whole turns in it).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("app", "assistant/", "memory/")
NOT_ON_THE_PATH = ("assistant/runtime/fake_api.py",)  # the fake model's server: its own threads


def _product_file(filename: str) -> str | None:
    try:
        name = Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    if not name.startswith(PRODUCT) or name in NOT_ON_THE_PATH:
        return None
    return name


@contextmanager
def crossings() -> Iterator[dict[tuple[str, ...], str]]:
    """Record, per thread, every product file entered again below itself on the stack."""
    found: dict[tuple[str, ...], str] = {}
    local = threading.local()
    names: dict[str, str | None] = {}

    def profile(frame: Any, event: str, _arg: Any) -> None:
        stack = getattr(local, "stack", None)
        if stack is None:
            stack = local.stack = []
        if event == "call":
            filename = frame.f_code.co_filename
            if filename not in names:
                names[filename] = _product_file(filename)
            name = names[filename]
            if name is not None:
                files = [f for f in stack if f]
                if name in files and files[-1] != name:
                    route = files[files.index(name) :] + [name]
                    found.setdefault(tuple(route), frame.f_code.co_name)
            stack.append(name)
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield found
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
