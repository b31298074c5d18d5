"""The memory store: per-user Chroma collections searched by hybrid dense + lexical scoring.

A memory's relevance to a query is one absolute score in about [0, 1]:

    similarity = DENSE_WEIGHT * cosine(query, memory) + (1 - DENSE_WEIGHT) * coverage

where `coverage` is the share of the query's (idf-weighted) words that occur in the memory.
Candidates come from Chroma's HNSW index (dense) and from a BM25 index (lexical); both
lists are rescored with the formula above. The weight and the default cut-off were
measured, not guessed: see docs/memory.md.

Chroma is the one source of truth. Every memory a search, list, export or count returns is
read from Chroma in that call. The BM25 index only proposes candidate ids and word
weights; it follows a change journal kept in Chroma (memory/journal.py), so every process
on one server sees every other process's writes, and it is saved beside the data so that
opening a large store does not re-read every memory.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import EmbeddingFunction

from memory.embeddings import MiniLMEmbeddingFunction, shared_model
from memory.injection import instruction_flag
from memory.journal import Entry, Journal
from memory.lexical import BM25Index, tokenize
from memory.records import (
    RESERVED,
    SOURCES,
    Added,
    Memory,
    MemoryStoreError,
    MetadataValue,
    check_source,
    clean_created_at,
    clean_text,
    validate_metadata,
)

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
    "same_fact",
    "validate_metadata",
]

try:
    import fcntl
except ImportError:  # Windows: no flock; the folder is then opened without the guard
    fcntl = None  # type: ignore[assignment]

# Tuned on LoCoMo conv-26 and checked on all ten conversations (docs/memory.md).
DENSE_WEIGHT = 0.5
# Default relevance cut-off, chosen from persona vs unrelated-question scores (docs/memory.md).
DEFAULT_MIN_SIMILARITY = 0.17
# Cosine at or above this between a new text and an existing memory may mean "same fact";
# same_fact() then decides (numbers, names and negations must agree). docs/memory.md.
DUPLICATE_COSINE = 0.95
# Each retriever proposes this many candidates (at least 4 x k) before rescoring.
CANDIDATES = 30
# Save the keyword index again once max(this, an eighth of the index) memories changed
# since the last save: an open then replays at most that many, and saving stays O(n) overall.
SNAPSHOT_EVERY = 2000
LOCK_FILE = "memory-gate.lock"
INDEX_DIR = "memory-gate-index"
_PAGE = 2000
# Records an import writes per Chroma call: a killed import loses at most this much work.
IMPORT_CHUNK = 256


# Chroma 1.5's server can fail a query with this while another client's first writes to a
# collection are being indexed (chroma-core/chroma#4212); the same query a moment later
# succeeds. Seen in 2 of 12 fresh 4-process runs here, always within the first writes.
_TRANSIENT = "Nothing found on disk"
_QUERY_ATTEMPTS = 5
# What SQLite says of a chroma.sqlite3 that is not (or no longer) a database.
_DAMAGED = ("file is not a database", "database disk image is malformed")


class FolderInUseError(MemoryStoreError):
    """Another process has the memory folder open (embedded Chroma serves one process)."""


def server_down(host: str, port: int, what: str) -> MemoryStoreError:
    """The one sentence for a Chroma server that does not answer: what it is, what to do."""
    return MemoryStoreError(
        f"The Chroma server at {host}:{port} is not answering ({what}): start it with "
        f"`chroma run --path DIR --host {host} --port {port}`, or point --host/--port "
        "(MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT) at the one that runs."
    )


def _unreachable(exc: BaseException) -> str | None:
    """What went wrong, when `exc` means the server could not be reached; else None."""
    import httpx

    if isinstance(exc, httpx.TransportError):  # refused, reset, timed out, closed mid-reply
        return type(exc).__name__
    return None


def _server_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """Turn "the server went away" (raw httpx errors) into one MemoryStoreError that says why."""

    @functools.wraps(method)
    def guarded(self: MemoryStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            what = _unreachable(exc) if self._server is not None else None
            if what is None:
                raise
            raise server_down(*self._server, what) from exc

    return guarded


def collection_name(user_id: str) -> str:
    """The Chroma collection that holds `user_id`'s memories."""
    # A readable slug for people browsing the folder, plus a hash so that two user ids
    # that slug the same ("Ann B", "ann-b") never share a collection.
    slug = re.sub(r"[^a-z0-9]+", "-", user_id.lower()).strip("-")[:40] or "user"
    digest = hashlib.sha256(user_id.encode()).hexdigest()[:10]
    return f"memories-{slug}-{digest}"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="microseconds")


def normalise(text: str) -> str:
    """The form two spellings of one fact share: case, spacing and end punctuation ignored."""
    return re.sub(r"\s+", " ", text.casefold()).strip().rstrip(".!?;, ")


def text_id(user_id: str, text: str) -> str:
    """The id a fact gets from its normalised text: the same fact, said twice, has one id."""
    return hashlib.sha256(f"{user_id}\n{normalise(text)}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class ImportResult:
    """What import_records() did with each record."""

    added: int = 0
    merged: int = 0  # the same fact as a memory already there: that memory was updated
    present: int = 0  # already there (same id, or the same words and metadata): no write
    flagged: int = 0  # stored, but read like an instruction: never sent to the model


FLAG = f"{RESERVED}flag"


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_NEGATIONS = frozenset(
    "not no never nothing nobody none cannot can't don't doesn't didn't isn't wasn't aren't "
    "weren't won't wouldn't shouldn't couldn't haven't hasn't hadn't".split()
)
_PRONOUN_I = frozenset({"i", "i'm", "i've", "i'd", "i'll"})


def same_fact(a: str, b: str) -> bool:
    """False when two similar texts differ in a number, a name or a negation."""
    # MiniLM puts "My PIN is 4821" / "...4822" at cosine 0.955, "...7:30pm..." / "...8:30pm..."
    # at 0.997, "I am (not) allergic to penicillin" at 0.973, and a long sentence with
    # another name at 0.945 (docs/memory.md): the words that differ decide, not the cosine.
    words_a = _WORD.findall(a)
    words_b = _WORD.findall(b)
    diff = {w.casefold() for w in words_a} ^ {w.casefold() for w in words_b}
    if any(ch.isdigit() for w in diff for ch in w):
        return False
    if diff & _NEGATIONS:
        return False
    names = {w.casefold() for w in (*words_a, *words_b) if w[:1].isupper()} - _PRONOUN_I
    return not diff & names


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


# ---- one process per embedded folder ----------------------------------------------------

_folder_locks: dict[Path, int] = {}
_folder_locks_lock = threading.Lock()


def _claim_folder(folder: Path) -> bool:
    """Hold an exclusive lock on `folder` for this process; False where flock is missing."""
    # Embedded Chroma keeps its vector index in the memory of the process that opened it:
    # a second process on the same folder reads stale vectors and can return deleted
    # memories (measured, docs/memory.md). So one process owns a folder; more need a server.
    if fcntl is None:
        return False
    with _folder_locks_lock:
        if folder in _folder_locks:
            return True
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise FolderInUseError(
                f"The memory folder {folder} is open in another process (pid {holder}, for "
                "example the running app). Embedded Chroma serves one process per folder: a "
                "second one would read stale vectors. Nothing was read or changed. Stop the "
                "other process first, or share the folder through a Chroma server: "
                f"`chroma run --path {folder}` and point every process at it with "
                "--host/--port (MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT)."
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _folder_locks[folder] = fd
        return True


def release_folder(folder: Path | str) -> None:
    """Let other processes open `folder` again; this process must not use its stores after."""
    from chromadb.api.shared_system_client import SharedSystemClient

    path = Path(folder).resolve()
    with _folder_locks_lock:
        fd = _folder_locks.pop(path, None)
        # Chroma caches one client system per folder for the life of the process: stop it,
        # so that a later open here reads what the other process wrote instead of stale
        # vectors. (Private to Chroma 1.5; there is no public per-folder close.)
        system = SharedSystemClient._identifier_to_system.pop(str(path), None)
        SharedSystemClient._identifier_to_refcount.pop(str(path), None)
        if system is not None:
            system.stop()
        with _registry_lock:
            for key in [k for k in _registry if k[0] == ("dir", str(path))]:
                del _registry[key]
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock


# ---- the keyword index of a collection in this process ----------------------------------


@dataclass
class _Lexical:
    """A collection's BM25 index in this process and the journal position it reflects."""

    index: BM25Index
    journal: Journal
    cursor: int
    lock: threading.RLock
    # True when this process holds the folder lock: no other writer exists, so reads need
    # not ask the journal (every write in this process updates the index under `lock`).
    exclusive: bool
    snapshot: Path | None
    pending: int = 0  # memories changed since the index was last saved


_registry: dict[tuple[Any, ...], _Lexical] = {}
_registry_lock = threading.Lock()


def _location(client: Any) -> tuple[tuple[Any, ...], Path | None]:
    """A key naming where `client`'s data lives, and the folder if it is embedded."""
    s = client.get_settings()
    if s.is_persistent:
        # Resolved, so "mem" and "./mem/" are one folder with one index.
        folder = Path(str(s.persist_directory)).resolve()
        return ("dir", str(folder)), folder
    return (
        "http",
        s.chroma_server_host,
        s.chroma_server_http_port,
        getattr(client, "tenant", None),
        getattr(client, "database", None),
    ), None


def default_cache_dir() -> Path:
    """Where server-mode keyword indexes are saved: $XDG_CACHE_HOME/memory-gate."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "memory-gate"


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
        # Load the model while Chroma opens: on a cold start the two take about as long.
        # Not a daemon: a process that exits while onnxruntime is still loading aborts
        # ("terminate called without an active exception"), so exit waits for the load.
        self._warm_error: BaseException | None = None
        self._warming = threading.Thread(target=self._warm_in_background, daemon=False)
        self._warming.start()
        where, folder = _location(client)
        self._server: tuple[str, int] | None = (where[1], where[2]) if folder is None else None
        exclusive = _claim_folder(folder) if folder is not None else False
        self._collection = self._open_collection()
        key = (where, self._name)
        with _registry_lock:
            lex = _registry.get(key)
            if lex is None:
                if folder is not None:
                    snapshot = folder / INDEX_DIR / f"{self._name}.bm25"
                else:
                    host, port = where[1], where[2]
                    snapshot = (
                        (cache_dir or default_cache_dir())
                        / f"{host}-{port}"
                        / (f"{self._name}.bm25")
                    )
                journal = Journal(client, self._name)
                lex = _registry[key] = _Lexical(
                    BM25Index(), journal, -1, threading.RLock(), exclusive, snapshot
                )
        self._lex = lex
        with lex.lock:
            if lex.cursor < 0:
                self._load_locked()

    def _open_collection(self) -> Any:
        try:
            return self._client.get_or_create_collection(
                self._name,
                embedding_function=self._ef,
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
        """A store in a local folder (created if missing); one process per folder."""
        import chromadb

        folder = Path(path).resolve()
        # Claimed before Chroma opens the folder, so a refused process touches nothing.
        _claim_folder(folder)
        # Default client settings on purpose: Chroma refuses a second client on the same
        # folder with different settings (and its telemetry is a no-op in 1.5).
        try:
            client = chromadb.PersistentClient(path=str(folder))
            return cls(client, user_id, **kw)
        except Exception as exc:
            if not any(sign in str(exc) for sign in _DAMAGED):
                raise
            raise MemoryStoreError(
                f"The memory folder {folder} holds a damaged Chroma database ({exc}), for "
                "example a file written over chroma.sqlite3. Nothing was changed. Move the "
                "folder aside and restore an export into a new one: "
                "`python -m memory --dir NEW import EXPORT.jsonl`."
            ) from exc

    @classmethod
    def http(cls, host: str, port: int, user_id: str = "demo", **kw: Any) -> MemoryStore:
        """A store on a Chroma server (`chroma run`); any number of processes may share it."""
        import chromadb

        try:
            client = chromadb.HttpClient(host=host, port=int(port))
        except ValueError as exc:  # Chroma's own "Could not connect to a Chroma server"
            if "connect" not in str(exc).lower():
                raise
            raise server_down(host, int(port), "no answer to its heartbeat") from exc
        try:
            return cls(client, user_id, **kw)
        except Exception as exc:
            what = _unreachable(exc)
            if what is None:
                raise
            raise server_down(host, int(port), what) from exc

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

    # ---- the keyword index --------------------------------------------------------

    def _load_locked(self) -> None:
        # Open: the saved index plus the journal entries written since it was saved.
        lex = self._lex
        loaded = BM25Index.load(lex.snapshot) if lex.snapshot is not None else None
        if loaded is not None:
            index, info = loaded
            valid = (
                info.get("collection") == str(self._collection.id)
                and info.get("journal") == lex.journal.id
                and 0 <= int(info.get("cursor", -1)) <= lex.journal.count()
            )
            if valid:
                lex.index, lex.cursor = index, int(info["cursor"])
                self._sync_locked()
                # A writer killed between its Chroma write and its journal entry leaves
                # the index one memory short: the count shows it, and a rebuild repairs it.
                if len(lex.index) == self._collection.count():
                    return
                self._sync_locked()
                if len(lex.index) == self._collection.count():
                    return
        self._rebuild_locked()

    def _rebuild_locked(self) -> None:
        # Read the journal position first: entries written while we page through Chroma are
        # applied again afterwards, which is harmless (applying re-reads the memory).
        lex = self._lex
        cursor = lex.journal.count()
        index = BM25Index()
        index.add_many((mid, doc) for mid, doc, _ in self._pages(["documents"]))
        lex.index, lex.cursor = index, cursor
        self._sync_locked()
        self._save_locked()

    def _save_locked(self) -> None:
        lex = self._lex
        if lex.snapshot is None:
            return
        info = {
            "collection": str(self._collection.id),
            "journal": lex.journal.id,
            "cursor": lex.cursor,
        }
        lex.index.save(lex.snapshot, info)
        lex.pending = 0

    def _maybe_save_locked(self) -> None:
        if self._lex.pending >= max(SNAPSHOT_EVERY, len(self._lex.index) // 8):
            self._save_locked()

    def _sync_locked(self) -> None:
        """Apply the journal entries this process has not seen (one count() when none)."""
        lex = self._lex
        total = lex.journal.count()
        if total < lex.cursor:  # the journal was dropped and began again: start over
            self._rebuild_locked()
            return
        while lex.cursor < total:
            entries = lex.journal.read(lex.cursor, total)
            if not entries:
                break
            self._apply_locked(entries)
            lex.cursor = entries[-1].seq + 1
        self._maybe_save_locked()

    def _apply_locked(self, entries: list[Entry]) -> None:
        changed: set[str] = set()
        for entry in entries:
            if entry.clear:
                self._lex.index.clear()
                changed.clear()
            changed.update(entry.ids)
        ids = sorted(changed)
        self._lex.pending += len(ids)
        for start in range(0, len(ids), _PAGE):
            page = ids[start : start + _PAGE]
            # The entry names the ids; Chroma holds what they are now (or that they are gone).
            got = self._collection.get(ids=page, include=["documents"])
            present = dict(zip(got["ids"], got["documents"], strict=True))
            self._lex.index.add_many((mid, doc or "") for mid, doc in present.items())
            for mid in page:
                if mid not in present:
                    self._lex.index.remove(mid)

    def _changed(self, ids: list[str] | None, texts: list[str] | None) -> None:
        """After a write to Chroma, under the lock: journal it, then bring our index along.

        `ids` None means every memory was deleted; `texts` None means `ids` were deleted.
        """
        lex = self._lex
        # With the folder lock no other writer exists: the next entry number is our cursor,
        # and we can index what we just wrote without reading it back.
        seq = lex.journal.append(ids, start=lex.cursor if lex.exclusive else None)
        if not lex.exclusive or seq != lex.cursor:
            self._sync_locked()
            return
        if ids is None:
            lex.index.clear()
        elif texts is None:
            for mid in ids:
                lex.index.remove(mid)
        else:
            lex.index.add_many(zip(ids, texts, strict=True))
        lex.cursor = seq + 1
        lex.pending += len(ids or ())
        self._maybe_save_locked()

    def _nearest(self, vector: np.ndarray, n: int) -> list[tuple[str, str, dict[str, Any], float]]:
        """The n nearest memories as (id, text, metadata, cosine), read from Chroma."""
        return self._nearest_many(vector[None, :], n)[0]

    def _nearest_many(
        self, vectors: np.ndarray, n: int
    ) -> list[list[tuple[str, str, dict[str, Any], float]]]:
        """For each vector, its n nearest memories as (id, text, metadata, cosine)."""
        from chromadb.errors import InternalError

        include = ["documents", "metadatas", "distances"]
        for attempt in range(_QUERY_ATTEMPTS):
            try:
                got = self._collection.query(
                    query_embeddings=vectors.tolist(), n_results=n, include=include
                )
                break
            except InternalError as exc:
                # Only Chroma's transient empty-segment error is retried (see _TRANSIENT).
                if _TRANSIENT not in str(exc) or attempt == _QUERY_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * 2**attempt)
        return [
            [
                (mid, doc or "", dict(meta or {}), 1.0 - float(dist))
                for mid, doc, meta, dist in zip(ids, docs, metas, dists, strict=True)
            ]
            for ids, docs, metas, dists in zip(
                got["ids"], got["documents"], got["metadatas"], got["distances"], strict=True
            )
        ]

    @_server_errors
    def close(self) -> None:
        """Save the keyword index if it changed; an embedded folder is then free for others."""
        lex = self._lex
        with lex.lock:
            if lex.pending:
                self._save_locked()
        _, folder = _location(self._client)
        if folder is not None:
            release_folder(folder)

    # ---- properties ---------------------------------------------------------------

    @property
    def min_similarity(self) -> float:
        """The default relevance cut-off for search()."""
        return self._min_similarity

    @property
    def folder(self) -> Path | None:
        """The folder an embedded store keeps its data in; None on a Chroma server."""
        return _location(self._client)[1]

    @property
    def server(self) -> tuple[str, int] | None:
        """(host, port) of the Chroma server this store talks to; None for a folder."""
        return self._server

    @property
    def client(self) -> Any:
        """The Chroma client (corrections keep their own collection on the same one)."""
        return self._client

    @property
    def collection(self) -> Any:
        """The underlying Chroma collection (for tools and tests)."""
        return self._collection

    def _warm_in_background(self) -> None:
        try:
            self._model.warm()
        except BaseException as exc:  # noqa: BLE001 - re-raised by warm() in the caller
            self._warm_error = exc

    def warm(self) -> None:
        """Load the embedding model once (open started it), so the first search is fast."""
        self._warming.join()
        if self._warm_error is not None:
            raise self._warm_error
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
        user = {k: meta[k] for k in sorted(meta) if not k.startswith(RESERVED)}
        return Memory(
            id=mid,
            text=doc or "",
            similarity=similarity,
            created_at=str(meta.get(f"{RESERVED}created_at", "")),
            source=str(meta.get(f"{RESERVED}source", "typed")),
            metadata=user,
            flag=str(meta.get(FLAG) or "") or None,
        )

    def _pages(self, include: list[str]) -> Iterator[tuple[str, str, dict[str, Any]]]:
        total = self._collection.count()
        for offset in range(0, total, _PAGE):
            page = self._collection.get(include=include, limit=_PAGE, offset=offset)
            docs = page.get("documents") or [None] * len(page["ids"])
            metas = page.get("metadatas") or [None] * len(page["ids"])
            for mid, doc, meta in zip(page["ids"], docs, metas, strict=True):
                yield mid, doc or "", dict(meta or {})

    # ---- writes -------------------------------------------------------------------

    @_server_errors
    def remember(
        self,
        text: str,
        metadata: Mapping[str, Any] | None = None,
        source: str = "typed",
    ) -> Added:
        """Store a fact; the same fact said again updates the existing memory instead."""
        text = clean_text(text)
        user_meta = validate_metadata(metadata)
        check_source(source)
        vector = self._embed([text])[0]
        flag = instruction_flag(text)
        with self._lex.lock:
            for mid, doc, old, cosine in self._nearest(vector, 3):
                if cosine >= DUPLICATE_COSINE and same_fact(text, doc):
                    self._merge_locked(mid, text, vector, old, user_meta)
                    return Added(id=mid, merged=True, flag=flag)
            return replace(self._insert_locked(text, vector, user_meta, source), flag=flag)

    def _merge_locked(
        self,
        mid: str,
        text: str,
        vector: np.ndarray,
        old: dict[str, Any],
        user_meta: dict[str, MetadataValue],
    ) -> None:
        merged = {
            **old,
            **user_meta,
            f"{RESERVED}updated_at": self._now(),
            FLAG: instruction_flag(text) or "",
        }
        self._collection.update(
            ids=[mid], documents=[text], embeddings=[vector.tolist()], metadatas=[merged]
        )
        self._changed([mid], [text])

    def _insert_locked(
        self, text: str, vector: np.ndarray, user_meta: dict[str, MetadataValue], source: str
    ) -> Added:
        # The id comes from the normalised text, and Chroma's add keeps the first record
        # for an id: two processes remembering one fact at once write one memory. The
        # write id tells us afterwards whose record won.
        mid = text_id(self.user_id, text)
        write_id = uuid.uuid4().hex
        meta = {
            **user_meta,
            f"{RESERVED}created_at": self._now(),
            f"{RESERVED}source": source,
            f"{RESERVED}write": write_id,
            FLAG: instruction_flag(text) or "",
        }
        self._collection.add(
            ids=[mid], documents=[text], embeddings=[vector.tolist()], metadatas=[meta]
        )
        got = self._collection.get(ids=[mid], include=["documents", "metadatas"])
        stored = dict(got["metadatas"][0] or {}) if got["ids"] else {}
        if stored.get(f"{RESERVED}write") == write_id:
            self._changed([mid], [text])
            return Added(id=mid, merged=False)
        if got["ids"] and normalise(got["documents"][0] or "") == normalise(text):
            # Another writer stored this fact first: keep its memory, add our metadata.
            self._merge_locked(mid, text, vector, stored, user_meta)
            return Added(id=mid, merged=True)
        # The id holds a memory that was edited to other words since: use a fresh id.
        mid = uuid.uuid4().hex
        self._collection.add(
            ids=[mid], documents=[text], embeddings=[vector.tolist()], metadatas=[meta]
        )
        self._changed([mid], [text])
        return Added(id=mid, merged=False)

    def add(
        self, text: str, metadata: Mapping[str, Any] | None = None, source: str = "typed"
    ) -> str:
        """Store a fact and return its id (the same fact again updates the existing memory)."""
        return self.remember(text, metadata, source).id

    @_server_errors
    def add_records(self, memories: list[Memory], embeddings: np.ndarray | None = None) -> int:
        """Insert complete records as they are (ids, dates, sources kept); no dedup."""
        # Used by import and by benchmarks: validate everything before writing anything,
        # so a bad record leaves the store untouched.
        texts, metas, ids = [], [], []
        for m in memories:
            texts.append(clean_text(m.text))
            check_source(m.source)
            if not isinstance(m.id, str) or not m.id:
                raise MemoryStoreError("Memory ids must be non-empty strings")
            ids.append(m.id)
            metas.append(
                {
                    **validate_metadata(m.metadata),
                    f"{RESERVED}created_at": clean_created_at(m.created_at)
                    if m.created_at
                    else self._now(),
                    f"{RESERVED}source": m.source,
                    FLAG: instruction_flag(texts[-1]) or "",
                }
            )
        if len(set(ids)) != len(ids):
            raise MemoryStoreError("Duplicate ids in one batch")
        if embeddings is None:
            embeddings = self._embed(texts)
        vectors = np.asarray(embeddings)
        with self._lex.lock:
            for start in range(0, len(ids), _PAGE):
                end = start + _PAGE
                self._collection.upsert(
                    ids=ids[start:end],
                    documents=texts[start:end],
                    embeddings=vectors[start:end].tolist(),
                    metadatas=metas[start:end],
                )
                self._changed(ids[start:end], texts[start:end])
        return len(ids)

    @_server_errors
    def import_records(
        self, memories: Sequence[Memory], progress: Callable[[int], None] | None = None
    ) -> ImportResult:
        """Add records by the rules of remember(): the same fact merges, a re-run adds nothing.

        A record with an empty id gets the id remember() would give its text. Everything is
        checked before anything is written. Records are then written in order, a chunk per
        Chroma call: a run killed part-way is finished by running it again, because ids are
        fixed and what is already there (same id, or the same words) is skipped.
        `progress` gets the number of records handled so far after each chunk.
        """
        records = []
        for n, m in enumerate(memories, 1):
            try:
                text = clean_text(m.text)
                check_source(m.source)
                meta = validate_metadata(m.metadata)
                created = clean_created_at(m.created_at) if m.created_at else ""
            except MemoryStoreError as exc:
                raise MemoryStoreError(f"record {n}: {exc}") from None
            if not isinstance(m.id, str):
                raise MemoryStoreError(f"record {n}: ids must be strings")
            records.append(replace(m, text=text, metadata=meta, created_at=created))
        total = ImportResult()
        for start in range(0, len(records), IMPORT_CHUNK):
            chunk = records[start : start + IMPORT_CHUNK]
            with self._lex.lock:
                done = self._import_chunk_locked(chunk)
            sums = zip(astuple(total), astuple(done), strict=True)
            total = ImportResult(*(a + b for a, b in sums))
            if progress is not None:
                progress(start + len(chunk))
        return total

    def _import_chunk_locked(self, chunk: list[Memory]) -> ImportResult:
        """One chunk of import_records(): skip what is there, merge same facts, add the rest."""
        derived = [not m.id for m in chunk]
        ids = [m.id or text_id(self.user_id, m.text) for m in chunk]
        # A derived id can already hold a memory that was edited to other words since:
        # such a fact gets a second fixed id, so a re-run still finds it.
        second = {i: f"{ids[i]}-2" for i, d in enumerate(derived) if d}
        got = self._collection.get(
            ids=ids + list(second.values()), include=["documents", "metadatas"]
        )
        stored = {
            mid: (doc or "", dict(meta or {}))
            for mid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        present = merged = 0
        todo: list[tuple[str, Memory]] = []
        new_meta: dict[str, dict[str, Any]] = {}  # same words, more metadata: merged as remember
        for i, m in enumerate(chunk):
            mid = ids[i]
            same = mid in stored and normalise(stored[mid][0]) == normalise(m.text)
            if mid in stored and derived[i] and not same:
                # This text's own id, holding other words: the same fact merged or edited
                # since (an earlier run of this import), or, rarely, another fact.
                if same_fact(stored[mid][0], m.text):
                    same = True
                else:
                    mid = second[i]
                    same = mid in stored and normalise(stored[mid][0]) == normalise(m.text)
            if mid not in stored:
                todo.append((mid, m))
                continue
            old = new_meta.get(mid, stored[mid][1])
            if same and any(old.get(k) != v for k, v in m.metadata.items()):
                new_meta[mid] = {**old, **m.metadata, f"{RESERVED}updated_at": self._now()}
                merged += 1
            else:
                present += 1  # the same id (an export's own), or the same fact as it is
        if new_meta:
            self._collection.update(ids=list(new_meta), metadatas=list(new_meta.values()))
        if not todo:
            return ImportResult(merged=merged, present=present)
        vectors = self._embed([m.text for _, m in todo])
        near = self._nearest_many(vectors, 3) if self._collection.count() else [[]] * len(todo)
        # Writes of this chunk: inserts in order, and updates of memories already stored.
        inserts: dict[str, tuple[str, np.ndarray, dict[str, Any]]] = {}
        updates: dict[str, tuple[str, np.ndarray, dict[str, Any]]] = {}
        added = flagged = 0
        for (mid, m), vector, neighbours in zip(todo, vectors, near, strict=True):
            flag = instruction_flag(m.text)
            best: tuple[float, str, str, dict[str, Any], bool] | None = None
            for nid, doc, old, cosine in neighbours:
                if nid in updates:
                    doc, old = updates[nid][0], updates[nid][2]
                if cosine >= DUPLICATE_COSINE and same_fact(m.text, doc):
                    best = (cosine, nid, doc, old, False)
                    break
            for nid, (doc, vec, old) in inserts.items():
                cosine = float(vec @ vector)
                better = best is None or cosine > best[0]
                if cosine >= DUPLICATE_COSINE and better and same_fact(m.text, doc):
                    best = (cosine, nid, doc, old, True)
            if best is None:
                meta = {
                    **m.metadata,
                    f"{RESERVED}created_at": m.created_at or self._now(),
                    f"{RESERVED}source": m.source,
                    FLAG: flag or "",
                }
                inserts[mid] = (m.text, vector, meta)
                added += 1
                flagged += flag is not None
                continue
            _, nid, doc, old, pending = best
            user = {k: v for k, v in old.items() if not k.startswith(RESERVED)}
            if normalise(doc) == normalise(m.text) and {**user, **m.metadata} == user:
                present += 1  # the same words and nothing new: already there
                continue
            meta = {**old, **m.metadata, FLAG: flag or ""}
            if not pending:
                meta[f"{RESERVED}updated_at"] = self._now()
            (inserts if pending else updates)[nid] = (m.text, vector, meta)
            merged += 1
            flagged += flag is not None
        for writes, call in ((updates, self._collection.update), (inserts, self._collection.add)):
            if writes:
                wids = list(writes)
                call(
                    ids=wids,
                    documents=[writes[w][0] for w in wids],
                    embeddings=[writes[w][1].tolist() for w in wids],
                    metadatas=[writes[w][2] for w in wids],
                )
                self._changed(wids, [writes[w][0] for w in wids])
        return ImportResult(added=added, merged=merged, present=present, flagged=flagged)

    @_server_errors
    def update(self, id: str, text: str) -> Memory:
        """Replace a memory's text (re-embedded); raises MemoryStoreError if it is gone."""
        text = clean_text(text)
        vector = self._embed([text])[0]
        with self._lex.lock:
            got = self._collection.get(ids=[id], include=["metadatas"])
            if not got["ids"]:
                raise MemoryStoreError(f"No memory with id {id!r} for user {self.user_id!r}")
            meta = {
                **(got["metadatas"][0] or {}),
                f"{RESERVED}updated_at": self._now(),
                FLAG: instruction_flag(text) or "",
            }
            self._collection.update(
                ids=[id], documents=[text], embeddings=[vector.tolist()], metadatas=[meta]
            )
            self._changed([id], [text])
            return self._to_memory(id, text, meta)

    @_server_errors
    def delete(self, id: str) -> bool:
        """Delete one memory; False when there was none with that id."""
        with self._lex.lock:
            got = self._collection.get(ids=[id], include=[])
            if not got["ids"]:
                return False
            self._collection.delete(ids=[id])
            self._changed([id], None)
            return True

    @_server_errors
    def clear(self) -> int:
        """Delete all of this user's memories; returns how many were deleted."""
        with self._lex.lock:
            ids = list(self._collection.get(include=[])["ids"])
            for start in range(0, len(ids), _PAGE):
                self._collection.delete(ids=ids[start : start + _PAGE])
            self._changed(None, None)
            return len(ids)

    # ---- reads --------------------------------------------------------------------

    @_server_errors
    def get(self, id: str) -> Memory | None:
        """One memory by id, or None."""
        got = self._collection.get(ids=[id], include=["documents", "metadatas"])
        if not got["ids"]:
            return None
        return self._to_memory(got["ids"][0], got["documents"][0], got["metadatas"][0])

    @_server_errors
    def count(self) -> int:
        """How many memories this user has, as Chroma counts them now."""
        return int(self._collection.count())

    def _all(self) -> list[Memory]:
        # Oldest first by creation time; the id breaks ties so the order is stable.
        out = [
            self._to_memory(mid, doc, meta)
            for mid, doc, meta in self._pages(["documents", "metadatas"])
        ]
        out.sort(key=lambda m: (m.created_at, m.id))
        return out

    @_server_errors
    def list(self, offset: int = 0, limit: int = 50) -> list[Memory]:
        """A page of memories, newest first (read from Chroma, so every writer's are there)."""
        if offset < 0 or limit < 0:
            raise MemoryStoreError("offset and limit must be >= 0")
        # Creation times only, then the texts of one page: Chroma cannot sort for us.
        order = sorted(
            (
                (str(meta.get(f"{RESERVED}created_at", "")), mid)
                for mid, _, meta in self._pages(["metadatas"])
            ),
            reverse=True,
        )
        page = [mid for _, mid in order[offset : offset + limit]]
        if not page:
            return []
        got = self._collection.get(ids=page, include=["documents", "metadatas"])
        by_id = {
            mid: self._to_memory(mid, doc, meta)
            for mid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        return [by_id[mid] for mid in page if mid in by_id]

    @_server_errors
    def export(self) -> list[Memory]:
        """Every memory, oldest first (the order an import should replay)."""
        return self._all()

    @_server_errors
    def search(self, query: str, k: int = 5, min_similarity: float | None = None) -> list[Memory]:
        """The k most relevant memories scoring at least the cut-off; -1 disables the cut-off."""
        if not isinstance(query, str) or not query.strip():
            return []
        if k < 1:
            raise MemoryStoreError(f"k must be at least 1, got {k}")
        cutoff = self._min_similarity if min_similarity is None else float(min_similarity)
        scored = self.scored(query, k)
        return [m for m in scored if (m.similarity or 0.0) >= cutoff][:k]

    @_server_errors
    def mentions(self, words: Sequence[str], max_share: float = 0.2) -> list[str]:
        """The words (names, codes) that some, but not most, of this user's memories contain.

        A keyword-index lookup, not a search: no memory is read. `max_share` keeps out a
        word so common in this store that it says nothing (the user's own name, say).
        """
        if not words:
            return []
        lex = self._lex
        with lex.lock:
            if not lex.exclusive:
                self._sync_locked()  # other processes may have written: one count() if not
            total = len(lex.index)
            counts = {w: lex.index.document_frequency(w) for w in words}
        limit = max(1, int(total * max_share))
        return [w for w, df in counts.items() if df and all(0 < n <= limit for n in df.values())]

    @_server_errors
    def scored(self, query: str, k: int) -> list[Memory]:
        """The top-k memories by hybrid similarity, without the cut-off."""
        vector = self._embed([query])[0]
        depth = max(CANDIDATES, 4 * k)
        lex = self._lex
        with lex.lock:
            if not lex.exclusive:
                self._sync_locked()  # other processes may have written: one count() if not
            lex_hits = lex.index.search(query, depth)
            idf = lex.index.idf(query)
        found: dict[str, tuple[str, dict[str, Any], float]] = {
            mid: (doc, meta, cosine) for mid, doc, meta, cosine in self._nearest(vector, depth)
        }
        missing = [mid for mid, _, _ in lex_hits if mid not in found]
        if missing:
            # Keyword-only candidates: read them from Chroma (a deleted one is simply not
            # there) and score their stored vectors on the dense half too.
            got = self._collection.get(
                ids=missing, include=["documents", "metadatas", "embeddings"]
            )
            if len(got["ids"]):
                sims = np.asarray(got["embeddings"], dtype=np.float32) @ vector
                for mid, doc, meta, sim in zip(
                    got["ids"], got["documents"], got["metadatas"], sims.tolist(), strict=True
                ):
                    found[mid] = (doc or "", dict(meta or {}), float(sim))
        idf_total = sum(idf.values())
        scores: dict[str, float] = {}
        for mid, (doc, _meta, cosine) in found.items():
            # Coverage from the text Chroma just returned, with the index's word weights.
            words = set(tokenize(doc)) if idf_total else set()
            covered = sum(w for t, w in idf.items() if t in words) / idf_total if idf_total else 0.0
            scores[mid] = DENSE_WEIGHT * cosine + (1.0 - DENSE_WEIGHT) * covered
        ranked = sorted(scores, key=lambda m: (-scores[m], m))[:k]
        return [
            self._to_memory(mid, found[mid][0], found[mid][1], round(scores[mid], 4))
            for mid in ranked
        ]

    # ---- helpers ------------------------------------------------------------------

    def _now(self) -> str:
        return _iso(self._clock())
