"""A local `chroma run` server on 127.0.0.1, started and stopped for tests and benchmarks.

Not shipped: the app never starts a Chroma server (it opens a folder, or one you run).

In production you start the server yourself (`chroma run --path DIR`) and point the app at
it with MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT; this helper does the same thing in-process.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

from assistant.runtime.child_server import ChildExited, end_process, free_port, wait_until_healthy


def chroma_executable() -> Path:
    """The `chroma` script installed next to this Python (it ships with chromadb)."""
    return Path(sys.executable).with_name("chroma")


class ChromaServerError(RuntimeError):
    """The server did not come up; the message holds its log."""


class ChromaServer:
    """`chroma run` on a free loopback port; use as a context manager."""

    def __init__(self, data_dir: Path, startup_timeout: float = 60.0) -> None:
        self.data_dir = Path(data_dir)
        self.host = "127.0.0.1"  # loopback only: tests and benchmarks never leave the machine
        self.port = free_port()
        self.startup_timeout = startup_timeout
        self.log_path = self.data_dir / "server.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ChromaServer:
        """Start the server and wait for its heartbeat."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        self._proc = subprocess.Popen(
            [
                str(chroma_executable()),
                "run",
                "--path",
                str(self.data_dir / "db"),
                "--host",
                self.host,
                "--port",
                str(self.port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()  # the child holds its own handle
        try:
            wait_until_healthy(
                lambda: self._proc is not None and self._proc.poll() is None,
                self._heartbeat,
                self.startup_timeout,
                poll_s=0.2,
            )
        except (ChildExited, TimeoutError):
            self.stop()
            raise ChromaServerError(
                f"chroma server did not start:\n{self.log_path.read_text(errors='replace')}"
            ) from None
        return self

    def _heartbeat(self) -> bool:
        url = f"http://{self.host}:{self.port}/api/v2/heartbeat"
        try:
            with urllib.request.urlopen(url, timeout=1) as resp:
                return resp.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        """Terminate the server (kill it if it does not stop within 10 s)."""
        if self._proc is not None:
            end_process(self._proc)
        self._proc = None

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
