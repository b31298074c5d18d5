"""A collection's keyword index in this process, kept in step with the change journal.

Chroma is the one source of truth: the index only proposes candidate ids and word weights.
It follows the change journal (memory/journal.py), so every process on one server sees
every other process's writes, and it is saved beside the data (a snapshot) so that
opening a large store does not re-read every memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memory.chroma import PAGE, pages
from memory.journal import Entry, Journal
from memory.lexical import BM25Index

# Save the index again once max(this, an eighth of the index) memories changed since the
# last save: an open then replays at most that many, and saving stays O(n) overall.
SNAPSHOT_EVERY = 2000


class KeywordIndex:
    """The BM25 index of one collection and the journal position it reflects.

    Writers hold `lock` from their Chroma write to their `changed()` call, so the index
    and the journal agree on the order of one process's writes.
    """

    def __init__(
        self, collection: Any, journal: Journal, snapshot: Path | None, exclusive: bool
    ) -> None:
        self.lock = threading.RLock()
        self._collection = collection
        self._journal = journal
        self._snapshot = snapshot
        # True when this process holds the folder lock: no other writer exists, so reads
        # need not ask the journal (every write here updates the index under `lock`).
        self._exclusive = exclusive
        self._index = BM25Index()
        self._cursor = -1  # journal entries [0, cursor) are in the index; -1: not loaded
        self._pending = 0  # memories changed since the index was last saved

    # ---- reads --------------------------------------------------------------------

    def candidates(self, query: str, depth: int) -> tuple[list[str], dict[str, float]]:
        """Up to `depth` ids by BM25 for `query`, and each query word's idf."""
        with self.lock:
            self._fresh_locked()
            hits = self._index.search(query, depth)
            return [mid for mid, _, _ in hits], self._index.idf(query)

    def document_frequencies(self, words: Sequence[str]) -> tuple[int, dict[str, dict[str, int]]]:
        """How many memories are indexed, and per word the document count of its tokens."""
        with self.lock:
            self._fresh_locked()
            return len(self._index), {w: self._index.document_frequency(w) for w in words}

    def __len__(self) -> int:
        """How many memories the index holds, once caught up with the journal."""
        with self.lock:
            self._fresh_locked()
            return len(self._index)

    def __contains__(self, memory_id: object) -> bool:
        """True when the index holds `memory_id`, once caught up with the journal."""
        with self.lock:
            self._fresh_locked()
            return memory_id in self._index

    def _fresh_locked(self) -> None:
        if self._cursor < 0:
            self._load_locked()
        elif not self._exclusive:
            self._sync_locked()  # other processes may have written: one count() if not

    # ---- writes -------------------------------------------------------------------

    def open(self) -> None:
        """Load the snapshot and replay the journal since, or rebuild; once per process."""
        with self.lock:
            if self._cursor < 0:
                self._load_locked()

    def changed(self, ids: list[str] | None, texts: list[str] | None) -> None:
        """After a write to Chroma, under `lock`: journal it, then bring the index along.

        `ids` None means every memory was deleted; `texts` None means `ids` were deleted.
        """
        with self.lock:
            # With the folder lock no other writer exists: the next entry number is our
            # cursor, and we can index what we just wrote without reading it back.
            seq = self._journal.append(ids, start=self._cursor if self._exclusive else None)
            if not self._exclusive or seq != self._cursor:
                self._sync_locked()
                return
            if ids is None:
                self._index.clear()
            elif texts is None:
                for mid in ids:
                    self._index.remove(mid)
            else:
                self._index.add_many(zip(ids, texts, strict=True))
            self._cursor = seq + 1
            self._pending += len(ids or ())
            self._maybe_save_locked()

    def save(self) -> None:
        """Write the snapshot now if anything changed since the last one."""
        with self.lock:
            if self._pending:
                self._save_locked()

    # ---- loading and following the journal -----------------------------------------

    def _load_locked(self) -> None:
        # Open: the saved index plus the journal entries written since it was saved.
        loaded = BM25Index.load(self._snapshot) if self._snapshot is not None else None
        if loaded is not None:
            index, info = loaded
            valid = (
                info.get("collection") == str(self._collection.id)
                and info.get("journal") == self._journal.id
                and 0 <= int(info.get("cursor", -1)) <= self._journal.count()
            )
            if valid:
                self._index, self._cursor = index, int(info["cursor"])
                # A writer killed between its Chroma write and its journal entry leaves
                # the index one memory short: the count shows it, and a rebuild repairs it.
                for _ in range(2):
                    self._sync_locked()
                    if len(self._index) == self._collection.count():
                        return
        self._rebuild_locked()

    def _rebuild_locked(self) -> None:
        # Read the journal position first: entries written while we page through Chroma
        # are applied again afterwards, which is harmless (applying re-reads the memory).
        cursor = self._journal.count()
        index = BM25Index()
        index.add_many((mid, doc) for mid, doc, _ in pages(self._collection, ["documents"]))
        self._index, self._cursor = index, cursor
        self._sync_locked()
        self._save_locked()

    def _save_locked(self) -> None:
        if self._snapshot is None:
            return
        info = {
            "collection": str(self._collection.id),
            "journal": self._journal.id,
            "cursor": self._cursor,
        }
        self._index.save(self._snapshot, info)
        self._pending = 0

    def _maybe_save_locked(self) -> None:
        if self._pending >= max(SNAPSHOT_EVERY, len(self._index) // 8):
            self._save_locked()

    def _sync_locked(self) -> None:
        """Apply the journal entries this process has not seen (one count() when none)."""
        total = self._journal.count()
        if total < self._cursor:  # the journal was dropped and began again: start over
            self._rebuild_locked()
            return
        while self._cursor < total:
            entries = self._journal.read(self._cursor, total)
            if not entries:
                break
            self._apply_locked(entries)
            self._cursor = entries[-1].seq + 1
        self._maybe_save_locked()

    def _apply_locked(self, entries: list[Entry]) -> None:
        changed: set[str] = set()
        for entry in entries:
            if entry.clear:
                self._index.clear()
                changed.clear()
            changed.update(entry.ids)
        ids = sorted(changed)
        self._pending += len(ids)
        for start in range(0, len(ids), PAGE):
            page = ids[start : start + PAGE]
            # The entry names the ids; Chroma holds what they are now (or that they are gone).
            got = self._collection.get(ids=page, include=["documents"])
            present = dict(zip(got["ids"], got["documents"], strict=True))
            self._index.add_many((mid, doc or "") for mid, doc in present.items())
            for mid in page:
                if mid not in present:
                    self._index.remove(mid)


class KeywordIndexes:
    """The keyword indexes open in a process: one per collection, shared by its stores."""

    def __init__(self) -> None:
        self._open: dict[tuple[Any, ...], KeywordIndex] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], make: Callable[[], KeywordIndex]) -> KeywordIndex:
        """The index open under `key`, made by `make()` the first time."""
        with self._lock:
            index = self._open.get(key)
            if index is None:
                index = self._open[key] = make()
            return index

    def forget(self, where: tuple[Any, ...]) -> None:
        """Drop the indexes of every collection at location `where` (a closed folder)."""
        with self._lock:
            for key in [k for k in self._open if k[0] == where]:
                del self._open[key]
