"""Importing records by the rules of remember(): the same fact merges, a re-run adds nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.chroma import Neighbour
from memory.facts import fact_words, normalise, same_fact, text_id
from memory.injection import instruction_flag
from memory.records import FLAG, RESERVED, Memory

# Records an import writes per Chroma call: a killed import loses at most this much work.
IMPORT_CHUNK = 256

_Write = tuple[str, np.ndarray, dict[str, Any]]  # text, vector, metadata
_Found = tuple[str, str, dict[str, Any]]  # id, text, metadata of the memory a record joins


@dataclass(frozen=True)
class ImportResult:
    """What import_records() did with each record, and which memory holds each one now."""

    added: int = 0  # a new memory
    merged: int = 0  # the same fact as a memory there before this import: that one was updated
    repeated: int = 0  # the same fact as an earlier record of this import: one memory for both
    present: int = 0  # there before this import (same id, or the same words), nothing new
    flagged: int = 0  # stored, but read like an instruction: never sent to the model
    ids: tuple[str, ...] = ()  # the memory holding each record's fact, in record order
    missing: int = 0  # of those memories, how many a read-back after the import did not find

    def __add__(self, other: ImportResult) -> ImportResult:
        return ImportResult(
            self.added + other.added,
            self.merged + other.merged,
            self.repeated + other.repeated,
            self.present + other.present,
            self.flagged + other.flagged,
            self.ids + other.ids,
            self.missing + other.missing,
        )


@dataclass
class ChunkImporter:
    """Writes one chunk of checked records at a time; the caller holds the keyword lock."""

    collection: Any
    user_id: str
    embed: Callable[[list[str]], np.ndarray]
    nearest_many: Callable[[np.ndarray, int], list[list[Neighbour]]]
    now: Callable[[], str]
    changed: Callable[[list[str], list[str]], None]
    # Memories this import created: a later record of the same fact is a repeat, not a
    # merge "into a memory already there" (issue 29: the summary said so of such lines).
    created: set[str] = field(default_factory=set)

    def run(self, chunk: list[Memory]) -> ImportResult:
        """Skip what is there, merge same facts into what is stored, add the rest."""
        counts: Counter[str] = Counter()
        where = [""] * len(chunk)
        todo = self._skip_present(chunk, where, counts)
        if todo:
            self._write(todo, where, counts)
        return ImportResult(**counts, ids=tuple(where))

    def _kind(self, mid: str, wrote: bool) -> str:
        if mid in self.created:
            return "repeated"
        return "merged" if wrote else "present"

    def _skip_present(
        self, chunk: list[Memory], where: list[str], counts: Counter[str]
    ) -> list[tuple[int, str, Memory]]:
        derived = [not m.id for m in chunk]
        ids = [m.id or text_id(self.user_id, m.text) for m in chunk]
        # A derived id can already hold a memory that was edited to other words since:
        # such a fact gets a second fixed id, so a re-run still finds it.
        second = {i: f"{ids[i]}-2" for i, d in enumerate(derived) if d}
        # Two records of one normalised text share an id: Chroma refuses an id asked twice.
        wanted = list(dict.fromkeys([*ids, *second.values()]))
        got = self.collection.get(ids=wanted, include=["documents", "metadatas"])
        stored = {
            mid: (doc or "", dict(meta or {}))
            for mid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        todo: list[tuple[int, str, Memory]] = []
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
                todo.append((i, mid, m))
                continue
            where[i] = mid
            old = new_meta.get(mid, stored[mid][1])
            wrote = same and any(old.get(k) != v for k, v in m.metadata.items())
            if wrote:
                new_meta[mid] = {**old, **m.metadata, f"{RESERVED}updated_at": self.now()}
            # not `same`: the same id (an export's own) holding words edited since: kept
            counts[self._kind(mid, wrote)] += 1
        if new_meta:
            self.collection.update(ids=list(new_meta), metadatas=list(new_meta.values()))
        return todo

    def _write(
        self, todo: list[tuple[int, str, Memory]], where: list[str], counts: Counter[str]
    ) -> None:
        vectors = self.embed([m.text for _, _, m in todo])
        stored = self.collection.count()
        near = self.nearest_many(vectors, 3) if stored else [[] for _ in todo]
        # Writes of this chunk: inserts in order, and updates of memories already stored.
        inserts: dict[str, _Write] = {}
        updates: dict[str, _Write] = {}
        pending: dict[tuple[str, ...], str] = {}  # the fact's words -> this chunk's insert
        for (i, mid, m), vector, neighbours in zip(todo, vectors, near, strict=True):
            flag = instruction_flag(m.text)
            found = self._stored_same_fact(m.text, neighbours, updates)
            key = fact_words(m.text)
            if found is None and key in pending:
                nid = pending[key]
                found = (nid, inserts[nid][0], inserts[nid][2])
            if found is None:
                meta = {
                    **m.metadata,
                    f"{RESERVED}created_at": m.created_at or self.now(),
                    f"{RESERVED}source": m.source,
                    FLAG: flag or "",
                }
                inserts[mid] = (m.text, vector, meta)
                pending[key] = where[i] = mid
                self.created.add(mid)
                counts["added"] += 1
                counts["flagged"] += flag is not None
                continue
            nid, doc, old = found
            where[i] = nid
            user = {k: v for k, v in old.items() if not k.startswith(RESERVED)}
            if normalise(doc) == normalise(m.text) and {**user, **m.metadata} == user:
                counts[self._kind(nid, False)] += 1  # the same words and nothing new
                continue
            meta = {**old, **m.metadata, FLAG: flag or ""}
            if nid not in inserts:
                meta[f"{RESERVED}updated_at"] = self.now()
            (inserts if nid in inserts else updates)[nid] = (m.text, vector, meta)
            counts[self._kind(nid, True)] += 1
            counts["flagged"] += flag is not None
        for writes, call in ((updates, self.collection.update), (inserts, self.collection.add)):
            if writes:
                wids = list(writes)
                call(
                    ids=wids,
                    documents=[writes[w][0] for w in wids],
                    embeddings=[writes[w][1].tolist() for w in wids],
                    metadatas=[writes[w][2] for w in wids],
                )
                self.changed(wids, [writes[w][0] for w in wids])

    @staticmethod
    def _stored_same_fact(
        text: str, neighbours: list[Neighbour], updates: dict[str, _Write]
    ) -> _Found | None:
        """The nearest stored memory stating the same fact, as this chunk has left it."""
        for nid, doc, old, _cosine in neighbours:
            if nid in updates:
                doc, old = updates[nid][0], updates[nid][2]
            if same_fact(text, doc):
                return nid, doc, old
        return None
