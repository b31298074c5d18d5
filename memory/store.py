"""The memory store: per-user Chroma collections searched by hybrid dense + lexical scoring.

A memory's relevance to a query is one absolute score in about [0, 1]:

    similarity = DENSE_WEIGHT * cosine(query, memory) + (1 - DENSE_WEIGHT) * coverage

where `coverage` is the share of the query's (idf-weighted) words that occur in the memory.
Candidates come from Chroma's HNSW index (dense) and from an in-process BM25 index
(lexical); both lists are rescored with the formula above. The weight and the default
cut-off were measured, not guessed: see docs/memory.md.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np
from chromadb.api.types import EmbeddingFunction

from memory.embeddings import MiniLMEmbeddingFunction, shared_model
from memory.lexical import BM25Index

if TYPE_CHECKING:
    from assistant.config import Settings

# Tuned on LoCoMo conv-26 and checked on all ten conversations (docs/memory.md).
DENSE_WEIGHT = 0.5
# Default relevance cut-off, chosen from persona vs unrelated-question scores (docs/memory.md).
DEFAULT_MIN_SIMILARITY = 0.17
# Cosine at or above this between a new text and an existing memory means "same fact":
# the existing memory is updated instead of a second copy being added.
DUPLICATE_COSINE = 0.95
# Each retriever proposes this many candidates (at least 4 x k) before rescoring.
CANDIDATES = 30
SOURCES = ("typed", "captured", "seeded", "imported")
# Internal fields live next to user metadata in Chroma under this reserved prefix.
_RESERVED = "mg:"
_PAGE = 2000

MetadataValue = str | int | float | bool


class MemoryStoreError(ValueError):
    """A request the store cannot honour; the message is meant for a human."""


@dataclass(frozen=True)
class Memory:
    """One stored memory; `similarity` is set by search and None elsewhere."""

    id: str
    text: str
    similarity: float | None
    created_at: str
    source: str
    metadata: dict[str, MetadataValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Added:
    """Result of remember(): the id, and whether an existing near-duplicate was updated."""

    id: str
    merged: bool


def collection_name(user_id: str) -> str:
    """The Chroma collection that holds `user_id`'s memories."""
    # A readable slug for people browsing the folder, plus a hash so that two user ids
    # that slug the same ("Ann B", "ann-b") never share a collection.
    slug = re.sub(r"[^a-z0-9]+", "-", user_id.lower()).strip("-")[:40] or "user"
    digest = hashlib.sha256(user_id.encode()).hexdigest()[:10]
    return f"memories-{slug}-{digest}"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="microseconds")


def _clean_text(text: object, what: str = "Memory text") -> str:
    if not isinstance(text, str):
        raise MemoryStoreError(f"{what} must be a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot be stored by Chroma (or tokenised): say so up front.
        raise MemoryStoreError(f"{what} is not valid Unicode (it holds a lone surrogate)") from None
    cleaned = text.strip()
    if not cleaned:
        raise MemoryStoreError(f"{what} is empty: write the fact to remember.")
    return cleaned


def validate_metadata(metadata: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """Return a copy of `metadata` or raise MemoryStoreError naming the bad key."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise MemoryStoreError(
            f"Metadata must be a mapping of names to values, got {type(metadata).__name__}"
        )
    out: dict[str, MetadataValue] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key.strip():
            raise MemoryStoreError(f"Metadata names must be non-empty strings, got {key!r}")
        if key.startswith(_RESERVED):
            raise MemoryStoreError(f"Metadata name {key!r} is reserved (prefix {_RESERVED!r}).")
        if not isinstance(value, (str, int, float, bool)):
            raise MemoryStoreError(
                f"Metadata {key!r} has a {type(value).__name__} value; Chroma stores only "
                "str, int, float or bool. Convert it (e.g. json.dumps) first."
            )
        # Chroma silently stores NaN/inf as null: refuse rather than lose the value.
        if isinstance(value, float) and not math.isfinite(value):
            raise MemoryStoreError(f"Metadata {key!r} is {value}; only finite numbers are stored.")
        out[key] = value
    return out


class _CallableEncoder:
    """Adapts a Chroma-style embedding function (callable on texts) to encode()/warm()."""

    def __init__(self, fn: Callable[[list[str]], Any]) -> None:
        self._fn = fn

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._fn(list(texts)), dtype=np.float32)

    def warm(self) -> None:
        warm = getattr(self._fn, "warm", None)
        if callable(warm):
            warm()
        else:
            self._fn(["warm up"])


def _as_encoder(embedding: Any) -> Any:
    # Accept a MiniLM (encode), a MiniLMEmbeddingFunction (callable), or None (shared).
    if embedding is None:
        return shared_model()
    if hasattr(embedding, "encode"):
        return embedding
    if callable(embedding):
        return _CallableEncoder(embedding)
    raise MemoryStoreError("embedding must be a MiniLM-like encoder or an embedding function")


@dataclass
class _Shared:
    """Per-collection state shared by every store in the process that opens it."""

    lexical: BM25Index
    created: dict[str, str]
    lock: threading.RLock
    # id -> (text, stored metadata): search reads candidates from here instead of asking
    # Chroma for documents on every query (halves the Chroma time per search).
    records: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    loaded: bool = False


_registry: dict[tuple[Any, ...], _Shared] = {}
_registry_lock = threading.Lock()


def _client_key(client: Any) -> tuple[Any, ...]:
    # Two clients on the same folder/server must share one lexical index, or a write
    # through one would be invisible to the other's keyword search.
    try:
        s = client.get_settings()
        return (
            bool(s.is_persistent),
            str(s.persist_directory),
            s.chroma_server_host,
            s.chroma_server_http_port,
            getattr(client, "tenant", None),
            getattr(client, "database", None),
        )
    except Exception:
        return ("client", id(client))


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
    ) -> None:
        if not isinstance(user_id, str) or not user_id.strip():
            raise MemoryStoreError("user_id must be a non-empty string")
        self.user_id = user_id
        self._client = client
        self._model = _as_encoder(embedding)
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
        self._collection = self._open_collection()
        key = (*_client_key(client), self._name)
        with _registry_lock:
            shared = _registry.get(key)
            if shared is None:
                shared = _registry[key] = _Shared(BM25Index(), {}, threading.RLock())
        self._shared = shared
        with shared.lock:
            if not shared.loaded:
                self._rebuild_locked()
                shared.loaded = True

    def _open_collection(self) -> Any:
        ef = self._ef
        try:
            return self._client.get_or_create_collection(
                self._name,
                embedding_function=ef,
                metadata={"memory_gate_user": self.user_id},
            )
        except ValueError as exc:
            if "onflict" not in str(exc):
                raise
            raise MemoryStoreError(
                f"The memory folder already holds user {self.user_id!r}'s collection "
                f"{self._name!r}, but it was made with a different embedding function "
                f"(Chroma says: {exc}). Its vectors are not comparable with this model's, so "
                "nothing was read or changed. Fix: point --dir / MEMGATE_MEMORY_DIR at a new "
                "folder and import an export of the old memories, or open the old folder "
                "with the embedding function that made it."
            ) from None

    # ---- construction -------------------------------------------------------------

    @classmethod
    def persistent(cls, path: Any, user_id: str = "demo", **kw: Any) -> MemoryStore:
        """A store in a local folder (created if missing)."""
        import chromadb

        # Default client settings on purpose: Chroma refuses a second client on the same
        # folder with different settings (and its telemetry is a no-op in 1.5).
        client = chromadb.PersistentClient(path=str(path))
        return cls(client, user_id, **kw)

    @classmethod
    def http(cls, host: str, port: int, user_id: str = "demo", **kw: Any) -> MemoryStore:
        """A store on a Chroma server (`chroma run`)."""
        import chromadb

        client = chromadb.HttpClient(host=host, port=int(port))
        return cls(client, user_id, **kw)

    @classmethod
    def open(cls, settings: Settings) -> MemoryStore:
        """The store the settings describe: a server when chroma_host is set, else a folder."""
        kw = {"min_similarity": settings.min_similarity}
        if settings.chroma_host:
            return cls.http(settings.chroma_host, settings.chroma_port, settings.user_id, **kw)
        return cls.persistent(settings.memory_dir, settings.user_id, **kw)

    def _rebuild_locked(self) -> None:
        # The lexical index lives in memory: rebuild it from Chroma, the source of truth.
        self._shared.lexical.clear()
        self._shared.created.clear()
        self._shared.records.clear()
        total = self._collection.count()
        docs: list[tuple[str, str]] = []
        for offset in range(0, total, _PAGE):
            page = self._collection.get(
                include=["documents", "metadatas"], limit=_PAGE, offset=offset
            )
            for mid, doc, meta in zip(
                page["ids"], page["documents"], page["metadatas"], strict=True
            ):
                docs.append((mid, doc or ""))
                self._shared.records[mid] = (doc or "", dict(meta or {}))
                self._shared.created[mid] = str((meta or {}).get(f"{_RESERVED}created_at", ""))
        self._shared.lexical.add_many(docs)

    def refresh(self) -> None:
        """Re-read the lexical index from Chroma (after other processes wrote to a server)."""
        with self._shared.lock:
            self._rebuild_locked()

    # ---- properties ---------------------------------------------------------------

    @property
    def min_similarity(self) -> float:
        """The default relevance cut-off for search()."""
        return self._min_similarity

    @property
    def collection(self) -> Any:
        """The underlying Chroma collection (for tools and tests)."""
        return self._collection

    def warm(self) -> None:
        """Load the embedding model once, so the first search is fast."""
        self._model.warm()

    # ---- records ------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(texts), dtype=np.float32)

    @staticmethod
    def _to_memory(
        mid: str, doc: str | None, meta: Mapping[str, Any] | None, similarity: float | None = None
    ) -> Memory:
        meta = dict(meta or {})
        # Sorted: Chroma does not keep key order, and exports should be byte-for-byte stable.
        user = {k: meta[k] for k in sorted(meta) if not k.startswith(_RESERVED)}
        return Memory(
            id=mid,
            text=doc or "",
            similarity=similarity,
            created_at=str(meta.get(f"{_RESERVED}created_at", "")),
            source=str(meta.get(f"{_RESERVED}source", "typed")),
            metadata=user,
        )

    # ---- writes -------------------------------------------------------------------

    def remember(
        self,
        text: str,
        metadata: Mapping[str, Any] | None = None,
        source: str = "typed",
    ) -> Added:
        """Store a fact; a near-duplicate of an existing memory updates it instead."""
        text = _clean_text(text)
        user_meta = validate_metadata(metadata)
        if source not in SOURCES:
            raise MemoryStoreError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
        vector = self._embed([text])[0]
        with self._shared.lock:
            if len(self._shared.lexical):
                hit = self._collection.query(
                    query_embeddings=[vector.tolist()],
                    n_results=1,
                    include=["metadatas", "distances"],
                )
                if hit["ids"][0] and 1.0 - hit["distances"][0][0] >= DUPLICATE_COSINE:
                    mid = hit["ids"][0][0]
                    old = dict(hit["metadatas"][0][0] or {})
                    merged_meta = {**old, **user_meta, f"{_RESERVED}updated_at": self._now()}
                    self._collection.update(
                        ids=[mid],
                        documents=[text],
                        embeddings=[vector.tolist()],
                        metadatas=[merged_meta],
                    )
                    self._shared.lexical.add(mid, text)
                    self._shared.records[mid] = (text, merged_meta)
                    return Added(id=mid, merged=True)
            mid = self._new_id()
            self._write_locked([mid], [text], vector[None, :], [user_meta], [self._now()], [source])
            return Added(id=mid, merged=False)

    def add(
        self, text: str, metadata: Mapping[str, Any] | None = None, source: str = "typed"
    ) -> str:
        """Store a fact and return its id (near-duplicates update the existing memory)."""
        return self.remember(text, metadata, source).id

    def add_records(self, memories: list[Memory], embeddings: np.ndarray | None = None) -> int:
        """Insert complete records as they are (ids, dates, sources kept); no dedup."""
        # Used by import and by benchmarks: validate everything before writing anything,
        # so a bad record leaves the store untouched.
        texts, metas, created, sources, ids = [], [], [], [], []
        for m in memories:
            texts.append(_clean_text(m.text))
            metas.append(validate_metadata(m.metadata))
            if m.source not in SOURCES:
                raise MemoryStoreError(f"source must be one of {', '.join(SOURCES)}")
            sources.append(m.source)
            created.append(m.created_at or self._now())
            if not isinstance(m.id, str) or not m.id:
                raise MemoryStoreError("Memory ids must be non-empty strings")
            ids.append(m.id)
        if len(set(ids)) != len(ids):
            raise MemoryStoreError("Duplicate ids in one batch")
        if embeddings is None:
            embeddings = self._embed(texts)
        with self._shared.lock:
            for start in range(0, len(ids), _PAGE):
                end = start + _PAGE
                self._write_locked(
                    ids[start:end],
                    texts[start:end],
                    embeddings[start:end],
                    metas[start:end],
                    created[start:end],
                    sources[start:end],
                )
        return len(ids)

    def _write_locked(
        self,
        ids: list[str],
        texts: list[str],
        vectors: np.ndarray,
        metas: list[dict[str, MetadataValue]],
        created: list[str],
        sources: list[str],
    ) -> None:
        full = [
            {**m, f"{_RESERVED}created_at": c, f"{_RESERVED}source": s}
            for m, c, s in zip(metas, created, sources, strict=True)
        ]
        self._collection.upsert(
            ids=ids, documents=texts, embeddings=np.asarray(vectors).tolist(), metadatas=full
        )
        self._shared.lexical.add_many(zip(ids, texts, strict=True))
        self._shared.created.update(zip(ids, created, strict=True))
        self._shared.records.update(zip(ids, zip(texts, full, strict=True), strict=True))

    def update(self, id: str, text: str) -> Memory:
        """Replace a memory's text (re-embedded); raises MemoryStoreError if it is gone."""
        text = _clean_text(text)
        vector = self._embed([text])[0]
        with self._shared.lock:
            got = self._collection.get(ids=[id], include=["metadatas"])
            if not got["ids"]:
                raise MemoryStoreError(f"No memory with id {id!r} for user {self.user_id!r}")
            meta = {**(got["metadatas"][0] or {}), f"{_RESERVED}updated_at": self._now()}
            self._collection.update(
                ids=[id], documents=[text], embeddings=[vector.tolist()], metadatas=[meta]
            )
            self._shared.lexical.add(id, text)
            self._shared.records[id] = (text, meta)
            return self._to_memory(id, text, meta)

    def delete(self, id: str) -> bool:
        """Delete one memory; False when there was none with that id."""
        with self._shared.lock:
            got = self._collection.get(ids=[id], include=[])
            if not got["ids"]:
                return False
            self._collection.delete(ids=[id])
            self._shared.lexical.remove(id)
            self._shared.created.pop(id, None)
            self._shared.records.pop(id, None)
            return True

    def clear(self) -> int:
        """Delete all of this user's memories; returns how many were deleted."""
        with self._shared.lock:
            # Ask Chroma, not the cache: on a shared server another process may have added.
            ids = list(self._collection.get(include=[])["ids"])
            for start in range(0, len(ids), _PAGE):
                self._collection.delete(ids=ids[start : start + _PAGE])
            self._shared.lexical.clear()
            self._shared.created.clear()
            self._shared.records.clear()
            return len(ids)

    # ---- reads --------------------------------------------------------------------

    def get(self, id: str) -> Memory | None:
        """One memory by id, or None."""
        got = self._collection.get(ids=[id], include=["documents", "metadatas"])
        if not got["ids"]:
            return None
        return self._to_memory(got["ids"][0], got["documents"][0], got["metadatas"][0])

    def count(self) -> int:
        """How many memories this user has (asks Chroma, so server-side writes count)."""
        return int(self._collection.count())

    def list(self, offset: int = 0, limit: int = 50) -> list[Memory]:
        """A page of memories, newest first."""
        if offset < 0 or limit < 0:
            raise MemoryStoreError("offset and limit must be >= 0")
        with self._shared.lock:
            order = sorted(
                self._shared.created.items(), key=lambda kv: (kv[1], kv[0]), reverse=True
            )
        page = [mid for mid, _ in order[offset : offset + limit]]
        if not page:
            return []
        got = self._collection.get(ids=page, include=["documents", "metadatas"])
        by_id = {
            mid: self._to_memory(mid, doc, meta)
            for mid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        return [by_id[mid] for mid in page if mid in by_id]

    def export(self) -> list[Memory]:
        """Every memory, oldest first (the order an import should replay)."""
        return list(reversed(self.list(0, self.count())))

    def search(self, query: str, k: int = 5, min_similarity: float | None = None) -> list[Memory]:
        """The k most relevant memories scoring at least the cut-off; -1 disables the cut-off."""
        if not isinstance(query, str) or not query.strip():
            return []
        if k < 1:
            raise MemoryStoreError(f"k must be at least 1, got {k}")
        cutoff = self._min_similarity if min_similarity is None else float(min_similarity)
        scored = self.scored(query, k)
        return [m for m in scored if (m.similarity or 0.0) >= cutoff][:k]

    def scored(self, query: str, k: int) -> list[Memory]:
        """The top-k memories by hybrid similarity, without the cut-off."""
        vector = self._embed([query])[0]
        depth = max(CANDIDATES, 4 * k)
        lexical = self._shared.lexical
        total = len(lexical)
        if total == 0:
            return []
        dense = self._collection.query(
            query_embeddings=[vector.tolist()],
            n_results=min(depth, total),
            include=["distances"],
        )
        cosine = {
            mid: 1.0 - float(dist)
            for mid, dist in zip(dense["ids"][0], dense["distances"][0], strict=True)
        }
        lex_hits = lexical.search(query, depth)
        missing = [mid for mid, _, _ in lex_hits if mid not in cosine]
        if missing:
            # Keyword-only candidates: fetch their stored vectors to score them on both halves.
            got = self._collection.get(ids=missing, include=["embeddings"])
            if len(got["ids"]):
                sims = np.asarray(got["embeddings"], dtype=np.float32) @ vector
                cosine.update(zip(got["ids"], map(float, sims), strict=True))
        records = self._shared.records
        # A candidate deleted meanwhile by another thread is simply dropped.
        cosine = {mid: c for mid, c in cosine.items() if mid in records}
        coverage = {mid: cov for mid, _, cov in lex_hits}
        need = [mid for mid in cosine if mid not in coverage]
        coverage.update(zip(need, lexical.coverage(query, need), strict=True))
        scores = {
            mid: DENSE_WEIGHT * cosine[mid] + (1.0 - DENSE_WEIGHT) * coverage.get(mid, 0.0)
            for mid in cosine
        }
        out = []
        for mid in sorted(scores, key=lambda m: (-scores[m], m)):
            record = records.get(mid)
            if record is not None:
                out.append(self._to_memory(mid, record[0], record[1], round(scores[mid], 4)))
            if len(out) == k:
                break
        return out

    # ---- helpers ------------------------------------------------------------------

    def _now(self) -> str:
        return _iso(self._clock())

    @staticmethod
    def _new_id() -> str:
        import uuid

        return uuid.uuid4().hex
