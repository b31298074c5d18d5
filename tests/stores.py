"""A real store for a test: a Chroma folder of its own, holding the memories the test names."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.store import MemoryStore


def seeded_store(folder: Path, user: str, *texts: str) -> MemoryStore:
    """A persistent store in `folder` for `user`, holding `texts` as seeded memories."""
    from memory.store import MemoryStore  # loads Chroma: only the tests that open one pay

    store = MemoryStore.persistent(folder, user)
    for text in texts:
        store.add(text, source="seeded")
    return store
