"""A local `chroma run` server on 127.0.0.1, started and stopped for tests and benchmarks.

In production you start the server yourself (`chroma run --path DIR`) and point the app at
it with MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT; this helper does the same thing in-process.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def chroma_executable() -> Path:
    """The `chroma` script installed next to this Python (it ships with chromadb)."""
    return Path(sys.executable).with_name("chroma")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
        deadline = time.monotonic() + self.startup_timeout
        url = f"http://{self.host}:{self.port}/api/v2/heartbeat"
        while True:
            with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1) as resp:
                if resp.status == 200:
                    return self
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise ChromaServerError(
                    f"chroma server did not start:\n{self.log_path.read_text(errors='replace')}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        """Terminate the server (kill it if it does not stop within 10 s)."""
        if self._proc is None:
            return
        self._proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=10)
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
