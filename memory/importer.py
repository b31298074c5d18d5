"""Importing records by the rules of remember(): the same fact merges, a re-run adds nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.chroma import Neighbour
from memory.facts import DUPLICATE_COSINE, normalise, same_fact, text_id
from memory.injection import instruction_flag
from memory.records import FLAG, RESERVED, Memory

# Records an import writes per Chroma call: a killed import loses at most this much work.
IMPORT_CHUNK = 256

_Write = tuple[str, np.ndarray, dict[str, Any]]  # text, vector, metadata


@dataclass(frozen=True)
class ImportResult:
    """What import_records() did with each record."""

    added: int = 0
    merged: int = 0  # the same fact as a memory already there: that memory was updated
    present: int = 0  # already there (same id, or the same words and metadata): no write
    flagged: int = 0  # stored, but read like an instruction: never sent to the model

    def __add__(self, other: ImportResult) -> ImportResult:
        return ImportResult(
            self.added + other.added,
            self.merged + other.merged,
            self.present + other.present,
            self.flagged + other.flagged,
        )


@dataclass
class ChunkImporter:
    """Writes one chunk of checked records; the caller holds the keyword index's lock."""

    collection: Any
    user_id: str
    embed: Callable[[list[str]], np.ndarray]
    nearest_many: Callable[[np.ndarray, int], list[list[Neighbour]]]
    now: Callable[[], str]
    changed: Callable[[list[str], list[str]], None]

    def run(self, chunk: list[Memory]) -> ImportResult:
        """Skip what is there, merge same facts into what is stored, add the rest."""
        todo, merged, present = self._skip_present(chunk)
        if not todo:
            return ImportResult(merged=merged, present=present)
        done = self._write(todo)
        return done + ImportResult(merged=merged, present=present)

    def _skip_present(self, chunk: list[Memory]) -> tuple[list[tuple[str, Memory]], int, int]:
        derived = [not m.id for m in chunk]
        ids = [m.id or text_id(self.user_id, m.text) for m in chunk]
        # A derived id can already hold a memory that was edited to other words since:
        # such a fact gets a second fixed id, so a re-run still finds it.
        second = {i: f"{ids[i]}-2" for i, d in enumerate(derived) if d}
        got = self.collection.get(
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
                new_meta[mid] = {**old, **m.metadata, f"{RESERVED}updated_at": self.now()}
                merged += 1
            else:
                present += 1  # the same id (an export's own), or the same fact as it is
        if new_meta:
            self.collection.update(ids=list(new_meta), metadatas=list(new_meta.values()))
        return todo, merged, present

    def _write(self, todo: list[tuple[str, Memory]]) -> ImportResult:
        vectors = self.embed([m.text for _, m in todo])
        stored = self.collection.count()
        near = self.nearest_many(vectors, 3) if stored else [[] for _ in todo]
        # Writes of this chunk: inserts in order, and updates of memories already stored.
        inserts: dict[str, _Write] = {}
        updates: dict[str, _Write] = {}
        added = merged = present = flagged = 0
        for (mid, m), vector, neighbours in zip(todo, vectors, near, strict=True):
            flag = instruction_flag(m.text)
            best = self._same_fact(m.text, vector, neighbours, inserts, updates)
            if best is None:
                meta = {
                    **m.metadata,
                    f"{RESERVED}created_at": m.created_at or self.now(),
                    f"{RESERVED}source": m.source,
                    FLAG: flag or "",
                }
                inserts[mid] = (m.text, vector, meta)
                added += 1
                flagged += flag is not None
                continue
            nid, doc, old, pending = best
            user = {k: v for k, v in old.items() if not k.startswith(RESERVED)}
            if normalise(doc) == normalise(m.text) and {**user, **m.metadata} == user:
                present += 1  # the same words and nothing new: already there
                continue
            meta = {**old, **m.metadata, FLAG: flag or ""}
            if not pending:
                meta[f"{RESERVED}updated_at"] = self.now()
            (inserts if pending else updates)[nid] = (m.text, vector, meta)
            merged += 1
            flagged += flag is not None
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
        return ImportResult(added=added, merged=merged, present=present, flagged=flagged)

    @staticmethod
    def _same_fact(
        text: str,
        vector: np.ndarray,
        neighbours: list[Neighbour],
        inserts: dict[str, _Write],
        updates: dict[str, _Write],
    ) -> tuple[str, str, dict[str, Any], bool] | None:
        """The stored or pending memory stating the same fact: (id, text, meta, pending)."""
        # The nearest stored match first; a record of this chunk still pending wins if closer.
        best: tuple[float, str, str, dict[str, Any], bool] | None = None
        for nid, doc, old, cosine in neighbours:
            if nid in updates:
                doc, old = updates[nid][0], updates[nid][2]
            if cosine >= DUPLICATE_COSINE and same_fact(text, doc):
                best = (cosine, nid, doc, old, False)
                break
        for nid, (doc, vec, old) in inserts.items():
            cosine = float(vec @ vector)
            better = best is None or cosine > best[0]
            if cosine >= DUPLICATE_COSINE and better and same_fact(text, doc):
                best = (cosine, nid, doc, old, True)
        return None if best is None else best[1:]
