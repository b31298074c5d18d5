"""Where the tests' temporary folders live: on a RAM disk when the machine has one with room.

Chroma commits every write to SQLite and to its index files, and on a virtual machine's
disk those commits are much of what the store-heavy tests wait for (on a 2-core VM, ~18%
of a full run). No test checks the disk itself: a SIGKILLed process leaves its writes in
the page cache on any file system, so the durability tests check the same thing on a RAM
disk, and every assertion is unchanged. Only the scratch space moves.

Each run gets a folder of its own, so runs side by side never share one. It is removed
when the run passes; a failed run's folder is kept for a look, and removed by a later run
once that run's process is gone. `pytest --basetemp=DIR` still puts them where you say.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

RAM_DISK = Path("/dev/shm")
MIN_FREE = 2 << 30  # bytes; a full run writes ~0.4 GB (most of it damaged copies of a GGUF)
PREFIX = "memgate-tests-"
_FOLDER = pytest.StashKey[Path]()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale() -> None:
    """This user's folders of runs whose process is gone (killed, or failed and kept)."""
    for path in RAM_DISK.glob(PREFIX + "*"):
        try:
            pid = int(path.name[len(PREFIX) :].split("-")[0])
            mine = path.stat().st_uid == os.getuid()
        except (ValueError, OSError):
            continue
        if mine and pid != os.getpid() and not _alive(pid):
            shutil.rmtree(path, ignore_errors=True)


def _ram_disk_has_room() -> bool:
    try:
        usable = RAM_DISK.is_dir() and os.access(RAM_DISK, os.W_OK | os.X_OK)
        return usable and shutil.disk_usage(RAM_DISK).free >= MIN_FREE
    except OSError:
        return False


@pytest.hookimpl(tryfirst=True)  # before pytest's own tmp_path plugin reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    """Unless --basetemp is given, put this run's temporary folders on the RAM disk."""
    if config.option.basetemp is not None or not _ram_disk_has_room():
        return
    _remove_stale()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=RAM_DISK))
    config.option.basetemp = str(folder)
    config.stash[_FOLDER] = folder


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A passed run's folder is removed; a failed run's is kept until a later run."""
    folder = session.config.stash.get(_FOLDER, None)
    if folder is not None and exitstatus == 0:
        shutil.rmtree(folder, ignore_errors=True)
