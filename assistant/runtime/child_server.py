"""A server in a child process on loopback: a free port, waiting for its health check, stopping.

Used by the local model (llama.cpp, assistant/runtime/local_model.py) and by the Chroma server that
tests and benchmarks start (tests/servers/chroma_server.py).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable

LOOPBACK = "127.0.0.1"


class ChildExited(RuntimeError):
    """The child process ended before its health check passed."""


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port on `host` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_until_healthy(
    running: Callable[[], bool],
    healthy: Callable[[], bool],
    timeout_s: float,
    poll_s: float = 0.1,
) -> None:
    """Return once `healthy()`; ChildExited when `running()` turns false, TimeoutError after."""
    deadline = time.monotonic() + timeout_s
    while True:
        if not running():
            raise ChildExited("the child process exited before it was healthy")
        if healthy():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"not healthy after {timeout_s:.0f} s")
        time.sleep(poll_s)


def end_process(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Stop a child process: SIGTERM, then SIGKILL if it is still there after `grace_s`."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace_s)
