"""Python in a process of its own: at the project's root, the project importable, text I/O.

What a test checks across processes (a SIGKILL mid-write, a folder another process holds
open, what a fresh start reads back) needs a second Python that imports this checkout.
It gets this process's environment as the test left it (no API key, the local model off).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _env(extra: Mapping[str, str] | None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **(extra or {})}


def start_python(
    *args: str, env: Mapping[str, str] | None = None, **popen: Any
) -> subprocess.Popen[str]:
    """Start `python *args` and return at once; `env` adds variables, `popen` says where
    its streams go."""
    return subprocess.Popen([sys.executable, *args], text=True, env=_env(env), cwd=ROOT, **popen)


def run_python(
    *args: str, env: Mapping[str, str] | None = None, **run: Any
) -> subprocess.CompletedProcess[str]:
    """Run `python *args` to its end, its output and errors captured; `env` adds variables."""
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=_env(env), cwd=ROOT, **run
    )
