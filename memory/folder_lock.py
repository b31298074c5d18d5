"""One process per embedded memory folder: an exclusive flock on a file inside it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from memory.records import MemoryStoreError

try:
    import fcntl
except ImportError:  # Windows: no flock; the folder is then opened without the guard
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "memory-gate.lock"


class FolderInUseError(MemoryStoreError):
    """Another process has the memory folder open (embedded Chroma serves one process)."""


class FolderLocks:
    """The folders this process holds, each by an open descriptor with an exclusive flock."""

    def __init__(self) -> None:
        self._held: dict[Path, int] = {}
        self._lock = threading.Lock()

    def claim(self, folder: Path) -> bool:
        """Hold `folder` for this process (again is fine); False where flock is missing."""
        # Embedded Chroma keeps its vector index in the memory of the process that opened
        # it: a second process on the same folder reads stale vectors and can return
        # deleted memories (measured, docs/memory.md). So one process owns a folder.
        if fcntl is None:
            return False
        with self._lock:
            if folder in self._held:
                return True
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise FolderInUseError(
                    f"The memory folder {folder} is open in another process (pid {holder}, "
                    "for example the running app). Embedded Chroma serves one process per "
                    "folder: a second one would read stale vectors. Nothing was read or "
                    "changed. Stop the other process first, or share the folder through a "
                    f"Chroma server: `chroma run --path {folder}` and point every process at "
                    "it with --host/--port (MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT)."
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self._held[folder] = fd
            return True

    def release(self, folder: Path) -> None:
        """Let other processes claim `folder`; nothing happens if this process holds it not."""
        with self._lock:
            fd = self._held.pop(folder, None)
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock
