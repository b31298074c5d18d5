"""What the store needs of Chroma beyond plain calls: where data lives, errors, retries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory.records import MemoryStoreError

PAGE = 2000
# Chroma 1.5's server can fail a query with this while another client's first writes to a
# collection are being indexed (chroma-core/chroma#4212); the same query a moment later
# succeeds. Seen in 2 of 12 fresh 4-process runs here, always within the first writes.
_TRANSIENT = "Nothing found on disk"
_QUERY_ATTEMPTS = 5
# What SQLite says of a chroma.sqlite3 that is not (or no longer) a database.
DAMAGED = ("file is not a database", "database disk image is malformed")

# (id, text, metadata, cosine): one memory as a nearest-neighbour query returns it.
Neighbour = tuple[str, str, dict[str, Any], float]


@dataclass(frozen=True)
class Location:
    """Where a client's data lives: a key naming it, and the folder when it is embedded."""

    key: tuple[Any, ...]
    folder: Path | None
    server: tuple[str, int] | None


def location(client: Any) -> Location:
    """Where `client` keeps its data."""
    s = client.get_settings()
    if s.is_persistent:
        # Resolved, so "mem" and "./mem/" are one folder with one keyword index.
        folder = Path(str(s.persist_directory)).resolve()
        return Location(("dir", str(folder)), folder, None)
    host, port = s.chroma_server_host, s.chroma_server_http_port
    key = ("http", host, port, getattr(client, "tenant", None), getattr(client, "database", None))
    return Location(key, None, (host, port))


def forget_folder_client(folder: Path) -> None:
    """Stop Chroma's cached client system for `folder`, so a later open reads it afresh."""
    from chromadb.api.shared_system_client import SharedSystemClient

    # Chroma caches one client system per folder for the life of the process: without
    # this a later open here reads stale vectors after another process wrote. Private to
    # Chroma 1.5 (there is no public per-folder close): this is the one place that knows.
    system = SharedSystemClient._identifier_to_system.pop(str(folder), None)
    SharedSystemClient._identifier_to_refcount.pop(str(folder), None)
    if system is not None:
        system.stop()


def server_down(host: str, port: int, what: str) -> MemoryStoreError:
    """The one sentence for a Chroma server that does not answer: what it is, what to do."""
    return MemoryStoreError(
        f"The Chroma server at {host}:{port} is not answering ({what}): start it with "
        f"`chroma run --path DIR --host {host} --port {port}`, or point --host/--port "
        "(MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT) at the one that runs."
    )


def unreachable(exc: BaseException) -> str | None:
    """What went wrong, when `exc` means the server could not be reached; else None."""
    import httpx

    if isinstance(exc, httpx.TransportError):  # refused, reset, timed out, closed mid-reply
        return type(exc).__name__
    return None


@contextmanager
def server_errors(location: Location) -> Iterator[None]:
    """Turn "the server went away" (raw httpx errors) into one MemoryStoreError that says why."""
    try:
        yield
    except Exception as exc:
        server = location.server
        what = unreachable(exc) if server is not None else None
        if what is None:
            raise
        raise server_down(*server, what) from exc


def persistent_client(folder: Path) -> Any:
    """Chroma's client on `folder`; a damaged database is reported, never repaired."""
    import chromadb

    # Default client settings on purpose: Chroma refuses a second client on the same
    # folder with different settings (and its telemetry is a no-op in 1.5).
    try:
        return chromadb.PersistentClient(path=str(folder))
    except Exception as exc:
        error = damaged(folder, exc)
        if error is None:
            raise
        raise error from exc


def damaged(folder: Path, exc: Exception) -> MemoryStoreError | None:
    """The one message for a damaged chroma.sqlite3 when `exc` says so; else None."""
    if not any(sign in str(exc) for sign in DAMAGED):
        return None
    return MemoryStoreError(
        f"The memory folder {folder} holds a damaged Chroma database ({exc}), for "
        "example a file written over chroma.sqlite3. Nothing was changed. Move the "
        "folder aside and restore an export into a new one: "
        "`python -m memory --dir NEW import EXPORT.jsonl`."
    )


def http_client(host: str, port: int) -> Any:
    """Chroma's client on the server at host:port; a server that is not there says so."""
    import chromadb

    try:
        return chromadb.HttpClient(host=host, port=int(port))
    except ValueError as exc:  # Chroma's own "Could not connect to a Chroma server"
        if "connect" not in str(exc).lower():
            raise
        raise server_down(host, int(port), "no answer to its heartbeat") from exc


def open_collection(client: Any, name: str, user_id: str, embedding_function: Any) -> Any:
    """The user's collection, created if missing; another embedding function is refused."""
    try:
        return client.get_or_create_collection(
            name, embedding_function=embedding_function, metadata={"memory_gate_user": user_id}
        )
    except ValueError as exc:
        if "onflict" not in str(exc):
            raise
        raise MemoryStoreError(
            f"The memory folder already holds user {user_id!r}'s collection "
            f"{name!r}, but it was made with a different embedding function "
            f"(Chroma says: {exc}). Its vectors are not comparable with this model's, so "
            "nothing was read or changed. Fix: point --dir / MEMGATE_MEMORY_DIR at a new "
            "folder and import an export of the old memories, or open the old folder "
            "with the embedding function that made it."
        ) from None


def nearest_many(collection: Any, vectors: np.ndarray, n: int) -> list[list[Neighbour]]:
    """For each vector, its n nearest memories as (id, text, metadata, cosine)."""
    from chromadb.errors import InternalError

    include = ["documents", "metadatas", "distances"]
    for attempt in range(_QUERY_ATTEMPTS):
        try:
            got = collection.query(query_embeddings=vectors.tolist(), n_results=n, include=include)
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


def pages(collection: Any, include: list[str]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every record of `collection` as (id, text, metadata), a page per Chroma call."""
    total = collection.count()
    for offset in range(0, total, PAGE):
        page = collection.get(include=include, limit=PAGE, offset=offset)
        docs = page.get("documents") or [None] * len(page["ids"])
        metas = page.get("metadatas") or [None] * len(page["ids"])
        for mid, doc, meta in zip(page["ids"], docs, metas, strict=True):
            yield mid, doc or "", dict(meta or {})
