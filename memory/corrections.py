"""The user's corrections of the gate, kept in Chroma beside their memories.

A correction says "this message should have searched memory" (retrieve=True) or "this one
didn't need it" (retrieve=False). Each user has their own collection on the memory store's
Chroma client, so corrections live where the memories live: in the folder, or on the
server every process shares, and they survive restarts.

Every decision compares the message with every correction, so the book keeps them all in
memory as one matrix (a few hundred rows at most). A change journal (memory/journal.py)
tells each process when another one changed the collection: its count() is read at most
once every `recheck_s` seconds, and the book reloads only when it moved. This process's own
writes are seen at the next lookup; another process's within `recheck_s`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from memory import chroma
from memory.chroma import server_errors
from memory.facts import text_id
from memory.journal import Journal
from memory.records import MemoryStoreError, clean_created_at, clean_text
from memory.store import collection_name

# How a correction row is labelled when exported in the gate-eval format (read_rows).
EXPORT_KIND = "correction"
_PAGE = 2000
# A Chroma call per decision cost 0.6 ms idle and 2-9 ms on a busy 2-core machine
# (bench/corrections_bench.py); once a second keeps other processes' corrections fresh
# for a chat, where turns are seconds apart.
RECHECK_S = 1.0

Embed = Callable[[list[str]], np.ndarray]  # messages -> L2-normalised vectors, one row each


@dataclass(frozen=True)
class Correction:
    """The user's verdict on one message: the decision the gate should have made."""

    id: str
    message: str
    retrieve: bool  # True: "should have searched memory"; False: "didn't need memory"
    created_at: str  # ISO-8601, UTC
    gate: str = ""  # the gate mode whose decision was corrected
    reason: str = ""  # that gate's reason, for the list

    def as_row(self) -> dict[str, Any]:
        """The correction as a labelled gate-eval row (assistant/gates/labels.read_rows)."""
        return {
            "message": self.message,
            "retrieve": self.retrieve,
            "kind": EXPORT_KIND,
            "split": EXPORT_KIND,  # neither train nor heldout: a trainer opts in explicitly
            "id": self.id,
            "created_at": self.created_at,
            "gate": self.gate,
            "reason": self.reason,
        }


def corrections_name(user_id: str) -> str:
    """The Chroma collection that holds `user_id`'s corrections."""
    return "corrections-" + collection_name(user_id).removeprefix("memories-")


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="microseconds")


def _from_chroma(cid: str, doc: str | None, meta: Mapping[str, Any] | None) -> Correction:
    meta = dict(meta or {})
    return Correction(
        id=cid,
        message=doc or "",
        retrieve=bool(meta.get("retrieve")),
        created_at=str(meta.get("created_at", "")),
        gate=str(meta.get("gate", "")),
        reason=str(meta.get("reason", "")),
    )


class CorrectionBook:
    """One user's corrections: add, delete, list, and the nearest one to a message."""

    def __init__(
        self,
        client: Any,
        user_id: str,
        embed: Embed,
        *,
        clock: Callable[[], float] = time.time,
        recheck_s: float = RECHECK_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(user_id, str) or not user_id.strip():
            raise MemoryStoreError("user_id must be a non-empty string")
        self.user_id = user_id
        self._embed = embed
        self._clock = clock
        self._recheck_s = recheck_s
        self._monotonic = monotonic
        # On a Chroma server, "it went away" comes out as the store's one MemoryStoreError.
        self.location = chroma.location(client)
        self._checked = -math.inf  # when the journal was last counted
        name = corrections_name(user_id)
        # No embedding function: the vectors are the gate's own reading of each message
        # (`embed`), written with the record, and the matching is done here, not by Chroma.
        self._collection = client.get_or_create_collection(
            name, embedding_function=None, metadata={"memory_gate_corrections_of": user_id}
        )
        self._journal = Journal(client, name)
        self._lock = threading.Lock()
        self._seen = -1  # journal entries reflected in the cache; -1: never loaded
        self._items: list[Correction] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    # ---- the cache ----------------------------------------------------------------

    def _refresh_locked(self) -> None:
        now = self._monotonic()
        if self._seen >= 0 and now - self._checked < self._recheck_s:
            return
        self._checked = now
        # Count first: a write that lands while we read is seen again at the next count.
        count = self._journal.count()
        if count == self._seen:
            return
        items: list[Correction] = []
        vectors: list[np.ndarray] = []
        total = self._collection.count()
        for offset in range(0, total, _PAGE):
            got = self._collection.get(
                include=["documents", "metadatas", "embeddings"], limit=_PAGE, offset=offset
            )
            for cid, doc, meta, vec in zip(
                got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
            ):
                items.append(_from_chroma(cid, doc, meta))
                vectors.append(np.asarray(vec, dtype=np.float32))
        self._items = items
        self._matrix = np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        self._seen = count

    def nearest(self, vector: np.ndarray) -> tuple[Correction, float] | None:
        """The correction most similar (cosine) to `vector`, with its similarity; None if none."""
        with server_errors(self.location), self._lock:
            self._refresh_locked()
            if not self._items:
                return None
            sims = self._matrix @ np.asarray(vector, dtype=np.float32)
            best = int(np.argmax(sims))
            return self._items[best], float(sims[best])

    # ---- writes -------------------------------------------------------------------

    def add(
        self,
        message: str,
        retrieve: bool,
        *,
        gate: str = "",
        reason: str = "",
        created_at: str | None = None,
    ) -> Correction:
        """Record the right decision for `message`; correcting it again replaces the old one."""
        return self.add_many([(message, retrieve, gate, reason, created_at)])[0]

    def add_many(self, rows: Iterable[tuple[str, bool, str, str, str | None]]) -> list[Correction]:
        """Record many (message, retrieve, gate, reason, created_at): one embedding batch."""
        with server_errors(self.location):
            made: dict[str, Correction] = {}
            for message, retrieve, gate, reason, created in rows:
                text = clean_text(message, "the corrected message")
                if not isinstance(retrieve, bool):
                    raise MemoryStoreError("retrieve must be true or false")
                stamp = clean_created_at(created) if created else _iso(self._clock())
                # One correction per message: its id is the id of its normalised text.
                cid = text_id(self.user_id, text)
                made[cid] = Correction(cid, text, retrieve, stamp, gate, reason)
            if not made:
                return []
            records = list(made.values())
            vectors = np.asarray(self._embed([c.message for c in records]), dtype=np.float32)
            self._collection.upsert(
                ids=[c.id for c in records],
                documents=[c.message for c in records],
                embeddings=[v.tolist() for v in vectors],
                metadatas=[
                    {
                        "retrieve": c.retrieve,
                        "created_at": c.created_at,
                        "gate": c.gate,
                        "reason": c.reason,
                    }
                    for c in records
                ],
            )
            self._journal.append([c.id for c in records])
            self._stale()
            return records

    def delete(self, cid: str) -> bool:
        """Forget one correction; False when there was none with that id."""
        with server_errors(self.location):
            if not self._collection.get(ids=[cid], include=[])["ids"]:
                return False
            self._collection.delete(ids=[cid])
            self._journal.append([cid])
            self._stale()
            return True

    def clear(self) -> int:
        """Forget every correction of the user; how many there were."""
        with server_errors(self.location):
            ids = self._collection.get(include=[])["ids"]
            if not ids:
                return 0
            self._collection.delete(ids=ids)
            self._journal.append(ids)
            self._stale()
            return len(ids)

    def _stale(self) -> None:
        # Our own write: the next lookup counts the journal instead of waiting recheck_s.
        with self._lock:
            self._checked = -math.inf

    # ---- reads --------------------------------------------------------------------

    def get(self, cid: str) -> Correction | None:
        """One correction by id, or None."""
        with server_errors(self.location), self._lock:
            self._refresh_locked()
            return next((c for c in self._items if c.id == cid), None)

    def list(self) -> list[Correction]:
        """Every correction, newest first."""
        with server_errors(self.location), self._lock:
            self._refresh_locked()
            return sorted(self._items, key=lambda c: c.created_at, reverse=True)

    def count(self) -> int:
        """How many corrections the user has."""
        with server_errors(self.location):
            return int(self._collection.count())
