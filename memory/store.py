"""The memory store: one user's memories in Chroma, searched by hybrid dense + keyword scoring.

Chroma is the one source of truth: every memory a search, list, export or count returns
is read from Chroma in that call. The ideas behind the facade live beside it:

    facts.py        when two texts state the same fact, and a fact's id
    scoring.py      the hybrid score (cosine + keyword coverage) and the cut-off
    keyword.py      the keyword index, following the change journal (journal.py)
    folder_lock.py  one process per embedded folder
    chroma.py       where a client's data lives, server errors, query retries
    writes.py       the write rules: the same fact said twice is one memory
    importer.py     import by the rules of remember()
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import EmbeddingFunction

from memory import chroma
from memory.chroma import Neighbour, server_errors
from memory.embeddings import MiniLMEmbeddingFunction
from memory.encoder import Warming, as_encoder
from memory.facts import same_fact
from memory.folder_lock import FolderInUseError, FolderLocks
from memory.importer import ImportResult
from memory.journal import Journal
from memory.keyword import KeywordIndex, KeywordIndexes
from memory.records import (
    RESERVED,
    SOURCES,
    Added,
    Memory,
    MemoryStoreError,
    stamps,
    to_memory,
    validate_metadata,
)
from memory.scoring import CANDIDATES, DEFAULT_MIN_SIMILARITY, rank
from memory.writes import Writes

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "SOURCES",
    "Added",
    "FolderInUseError",
    "ImportResult",
    "Memory",
    "MemoryStore",
    "MemoryStoreError",
    "collection_name",
    "release_folder",
    "same_fact",
    "validate_metadata",
]

INDEX_DIR = "memory-gate-index"
# This process's folder locks and open keyword indexes: every store in it shares them.
FOLDER_LOCKS = FolderLocks()
KEYWORD_INDEXES = KeywordIndexes()


def collection_name(user_id: str) -> str:
    """The Chroma collection that holds `user_id`'s memories."""
    # A readable slug for people browsing the folder, plus a hash so that two user ids
    # that slug the same ("Ann B", "ann-b") never share a collection.
    slug = re.sub(r"[^a-z0-9]+", "-", user_id.lower()).strip("-")[:40] or "user"
    digest = hashlib.sha256(user_id.encode()).hexdigest()[:10]
    return f"memories-{slug}-{digest}"


def snapshot_path(where: chroma.Location, name: str, cache_dir: Path | None) -> Path | None:
    """Where collection `name`'s keyword index is saved: in its folder, or the cache."""
    if where.folder is not None:
        return where.folder / INDEX_DIR / f"{name}.bm25"
    if cache_dir is None or where.server is None:
        return None  # no cache folder given: the index is rebuilt on each open
    host, port = where.server
    return cache_dir / f"{host}-{port}" / f"{name}.bm25"


def release_folder(folder: Path | str) -> None:
    """Let other processes open `folder` again; this process must not use its stores after."""
    path = Path(folder).resolve()
    chroma.forget_folder_client(path)
    KEYWORD_INDEXES.forget(("dir", str(path)))
    FOLDER_LOCKS.release(path)


class MemoryStore:
    """Long-term memories of one user, in Chroma, searched by hybrid similarity."""

    def __init__(
        self,
        client: Any,
        user_id: str = "demo",
        *,
        embedding: Any = None,
        min_similarity: float | None = None,
        clock: Callable[[], float] = time.time,
        cache_dir: Path | None = None,
        indexes: KeywordIndexes | None = None,
    ) -> None:
        """`cache_dir` keeps a server's keyword index; `indexes` stands for another process."""
        if not isinstance(user_id, str) or not user_id.strip():
            raise MemoryStoreError("user_id must be a non-empty string")
        self.user_id = user_id
        self._client = client
        self._model = as_encoder(embedding)
        # A Chroma embedding function given as `embedding` is also what the collection
        # records, so a folder made with it is recognised (and a different one refused).
        self._ef = (
            embedding
            if isinstance(embedding, EmbeddingFunction)
            else MiniLMEmbeddingFunction(self._model)
        )
        self._clock = clock
        self._min_similarity = (
            DEFAULT_MIN_SIMILARITY if min_similarity is None else float(min_similarity)
        )
        self._name = collection_name(user_id)
        # Load the model while Chroma opens: on a cold start the two take about as long.
        self._warming = Warming(self._model)
        self.location = chroma.location(client)
        folder = self.location.folder
        exclusive = FOLDER_LOCKS.claim(folder) if folder is not None else False
        self._collection = chroma.open_collection(client, self._name, user_id, self._ef)
        snapshot = snapshot_path(self.location, self._name, cache_dir)
        self._keywords = (indexes or KEYWORD_INDEXES).get(
            (self.location.key, self._name),
            lambda: KeywordIndex(
                self._collection, Journal(client, self._name), snapshot, exclusive
            ),
        )
        self._keywords.open()
        # The encoder and the clock themselves, not the store's methods: a write never
        # calls back into the store that handed it on.
        self._writes = Writes(
            self._collection, self._keywords, user_id, self._model.encode, stamps(clock)
        )

    # ---- construction -------------------------------------------------------------

    @classmethod
    def persistent(cls, path: Any, user_id: str = "demo", **kw: Any) -> MemoryStore:
        """A store in a local folder (created if missing); one process per folder."""
        folder = Path(path).resolve()
        # Claimed before Chroma opens the folder, so a refused process touches nothing.
        FOLDER_LOCKS.claim(folder)
        client = chroma.persistent_client(folder)
        try:
            return cls(client, user_id, **kw)
        except Exception as exc:
            error = chroma.damaged(folder, exc)
            if error is None:
                raise
            raise error from exc

    @classmethod
    def http(cls, host: str, port: int, user_id: str = "demo", **kw: Any) -> MemoryStore:
        """A store on a Chroma server (`chroma run`); any number of processes may share it."""
        client = chroma.http_client(host, port)
        try:
            return cls(client, user_id, **kw)
        except Exception as exc:
            what = chroma.unreachable(exc)
            if what is None:
                raise
            raise chroma.server_down(host, int(port), what) from exc

    @classmethod
    def open(
        cls,
        memory_dir: Path | str = ".memory-gate",
        user_id: str = "demo",
        *,
        host: str | None = None,
        port: int = 8000,
        **kw: Any,
    ) -> MemoryStore:
        """A store on the server at `host` when given, else in the folder `memory_dir`."""
        if host:
            return cls.http(host, port, user_id, **kw)
        return cls.persistent(memory_dir, user_id, **kw)

    def close(self) -> None:
        """Save the keyword index if it changed; an embedded folder is then free for others."""
        with server_errors(self.location):
            self._keywords.save()
            if self.location.folder is not None:
                release_folder(self.location.folder)

    # ---- properties ---------------------------------------------------------------

    @property
    def min_similarity(self) -> float:
        """The default relevance cut-off for search()."""
        return self._min_similarity

    @property
    def folder(self) -> Path | None:
        """The folder an embedded store keeps its data in; None on a Chroma server."""
        return self.location.folder

    @property
    def client(self) -> Any:
        """The Chroma client (corrections keep their own collection on the same one)."""
        return self._client

    @property
    def collection(self) -> Any:
        """The underlying Chroma collection (for tools and tests)."""
        return self._collection

    @property
    def keywords(self) -> KeywordIndex:
        """This collection's keyword index in this process (every store of it shares one)."""
        return self._keywords

    def warm(self) -> None:
        """Load the embedding model once (open started it), so the first search is fast."""
        self._warming.wait()
        self._model.warm()

    def embed(self, texts: list[str]) -> np.ndarray:
        """The store's vectors of `texts` (float32, one row each)."""
        return np.asarray(self._model.encode(texts), dtype=np.float32)

    # ---- writes (memory/writes.py) ---------------------------------------------------

    def remember(
        self, text: str, metadata: Mapping[str, Any] | None = None, source: str = "typed"
    ) -> Added:
        """Store a fact; the same fact said again updates the existing memory instead."""
        with server_errors(self.location):
            return self._writes.remember(text, metadata, source)

    def add(
        self, text: str, metadata: Mapping[str, Any] | None = None, source: str = "typed"
    ) -> str:
        """Store a fact and return its id (the same fact again updates the existing memory)."""
        return self.remember(text, metadata, source).id

    def add_records(self, memories: list[Memory], embeddings: np.ndarray | None = None) -> int:
        """Insert complete records as they are (ids, dates, sources kept); no dedup."""
        with server_errors(self.location):
            return self._writes.add_records(memories, embeddings)

    def import_records(
        self, memories: Sequence[Memory], progress: Callable[[int], None] | None = None
    ) -> ImportResult:
        """Add records by the rules of remember(): the same fact merges, a re-run adds nothing."""
        with server_errors(self.location):
            return self._writes.import_records(memories, progress)

    def update(self, id: str, text: str) -> Memory:
        """Replace a memory's text (re-embedded); raises MemoryStoreError if it is gone."""
        with server_errors(self.location):
            return self._writes.update(id, text)

    def delete(self, id: str) -> bool:
        """Delete one memory; False when there was none with that id."""
        with server_errors(self.location):
            return self._writes.delete(id)

    def clear(self) -> int:
        """Delete all of this user's memories; returns how many were deleted."""
        with server_errors(self.location):
            return self._writes.clear()

    # ---- reads --------------------------------------------------------------------

    def get(self, id: str) -> Memory | None:
        """One memory by id, or None."""
        with server_errors(self.location):
            got = self._collection.get(ids=[id], include=["documents", "metadatas"])
            if not got["ids"]:
                return None
            return to_memory(got["ids"][0], got["documents"][0], got["metadatas"][0])

    def count(self) -> int:
        """How many memories this user has, as Chroma counts them now."""
        with server_errors(self.location):
            return int(self._collection.count())

    def list(self, offset: int = 0, limit: int = 50) -> list[Memory]:
        """A page of memories, newest first (read from Chroma, so every writer's are there)."""
        with server_errors(self.location):
            if offset < 0 or limit < 0:
                raise MemoryStoreError("offset and limit must be >= 0")
            # Creation times only, then the texts of one page: Chroma cannot sort for us.
            order = sorted(
                (
                    (str(meta.get(f"{RESERVED}created_at", "")), mid)
                    for mid, _, meta in chroma.pages(self._collection, ["metadatas"])
                ),
                reverse=True,
            )
            page = [mid for _, mid in order[offset : offset + limit]]
            if not page:
                return []
            got = self._collection.get(ids=page, include=["documents", "metadatas"])
            by_id = {
                mid: to_memory(mid, doc, meta)
                for mid, doc, meta in zip(
                    got["ids"], got["documents"], got["metadatas"], strict=True
                )
            }
            return [by_id[mid] for mid in page if mid in by_id]

    def export(self) -> list[Memory]:
        """Every memory, oldest first (the order an import should replay)."""
        with server_errors(self.location):
            rows = chroma.pages(self._collection, ["documents", "metadatas"])
            out = [to_memory(mid, doc, meta) for mid, doc, meta in rows]
            # Oldest first by creation time; the id breaks ties so the order is stable.
            out.sort(key=lambda m: (m.created_at, m.id))
            return out

    def search(self, query: str, k: int = 5, min_similarity: float | None = None) -> list[Memory]:
        """The k most relevant memories scoring at least the cut-off; -1 disables the cut-off."""
        with server_errors(self.location):
            if not isinstance(query, str) or not query.strip():
                return []
            if k < 1:
                raise MemoryStoreError(f"k must be at least 1, got {k}")
            cutoff = self._min_similarity if min_similarity is None else float(min_similarity)
            scored = self.scored(query, k)
            return [m for m in scored if (m.similarity or 0.0) >= cutoff][:k]

    def mentions(self, words: Sequence[str], max_share: float = 0.2) -> list[str]:
        """The words (names, codes) that some, but not most, of this user's memories contain.

        A keyword-index lookup, not a search: no memory is read. `max_share` keeps out a
        word so common in this store that it says nothing (the user's own name, say).
        """
        with server_errors(self.location):
            if not words:
                return []
            total, counts = self._keywords.document_frequencies(words)
            limit = max(1, int(total * max_share))
            return [
                w for w, df in counts.items() if df and all(0 < n <= limit for n in df.values())
            ]

    def scored(self, query: str, k: int) -> list[Memory]:
        """The top-k memories by hybrid similarity, without the cut-off."""
        with server_errors(self.location):
            vector = self.embed([query])[0]
            depth = max(CANDIDATES, 4 * k)
            keyword_ids, idf = self._keywords.candidates(query, depth)
            found = {mid: (doc, meta, cos) for mid, doc, meta, cos in self._nearest(vector, depth)}
            missing = [mid for mid in keyword_ids if mid not in found]
            if missing:
                # Keyword-only candidates: read them from Chroma (a deleted one is simply not
                # there) and score their stored vectors on the dense half too.
                got = self._collection.get(
                    ids=missing, include=["documents", "metadatas", "embeddings"]
                )
                if len(got["ids"]):
                    sims = np.asarray(got["embeddings"], dtype=np.float32) @ vector
                    rows = zip(got["ids"], got["documents"], got["metadatas"], sims, strict=True)
                    for mid, doc, meta, sim in rows:
                        found[mid] = (doc or "", dict(meta or {}), float(sim))
            ranked = rank({mid: (doc, cos) for mid, (doc, _, cos) in found.items()}, idf, k)
            return [to_memory(mid, found[mid][0], found[mid][1], round(s, 4)) for mid, s in ranked]

    # ---- helpers ------------------------------------------------------------------

    def _nearest(self, vector: np.ndarray, n: int) -> list[Neighbour]:
        """The n nearest memories as (id, text, metadata, cosine), read from Chroma."""
        return chroma.nearest_many(self._collection, vector[None, :], n)[0]
