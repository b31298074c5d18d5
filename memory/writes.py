"""The write rules of the memory store: the same fact said twice is one memory."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memory import chroma
from memory.chroma import PAGE, Neighbour
from memory.facts import normalise, same_fact, text_id
from memory.importer import IMPORT_CHUNK, ChunkImporter, ImportResult
from memory.injection import instruction_flag
from memory.keyword import KeywordIndex
from memory.records import (
    FLAG,
    RESERVED,
    Added,
    Memory,
    MemoryStoreError,
    MetadataValue,
    check_source,
    clean_created_at,
    clean_text,
    to_memory,
    validate_metadata,
)


@dataclass
class Writes:
    """Every write to one user's collection, each followed by its keyword-index change."""

    collection: Any
    keywords: KeywordIndex
    user_id: str
    embed: Callable[[list[str]], np.ndarray]
    now: Callable[[], str]

    def _nearest(self, vector: np.ndarray, n: int) -> list[Neighbour]:
        return chroma.nearest_many(self.collection, vector[None, :], n)[0]

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
        vector = self.embed([text])[0]
        flag = instruction_flag(text)
        with self.keywords.lock:
            # The nearest memories are the candidates; the words decide (facts.same_fact):
            # MiniLM puts "Alex owes Sam" and "Sam owes Alex" at cosine 0.994.
            for mid, doc, old, _cosine in self._nearest(vector, 3):
                if same_fact(text, doc):
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
    ) -> dict[str, Any]:
        """Write `text` over memory `mid`, keeping its metadata plus `user_meta`."""
        merged = {
            **old,
            **user_meta,
            f"{RESERVED}updated_at": self.now(),
            FLAG: instruction_flag(text) or "",
        }
        self.collection.update(
            ids=[mid], documents=[text], embeddings=[vector.tolist()], metadatas=[merged]
        )
        self.keywords.changed([mid], [text])
        return merged

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
            f"{RESERVED}created_at": self.now(),
            f"{RESERVED}source": source,
            f"{RESERVED}write": write_id,
            FLAG: instruction_flag(text) or "",
        }
        self.collection.add(
            ids=[mid], documents=[text], embeddings=[vector.tolist()], metadatas=[meta]
        )
        got = self.collection.get(ids=[mid], include=["documents", "metadatas"])
        stored = dict(got["metadatas"][0] or {}) if got["ids"] else {}
        if stored.get(f"{RESERVED}write") == write_id:
            self.keywords.changed([mid], [text])
            return Added(id=mid, merged=False)
        if got["ids"] and normalise(got["documents"][0] or "") == normalise(text):
            # Another writer stored this fact first: keep its memory, add our metadata.
            self._merge_locked(mid, text, vector, stored, user_meta)
            return Added(id=mid, merged=True)
        # The id holds a memory that was edited to other words since: use a fresh id.
        mid = uuid.uuid4().hex
        self.collection.add(
            ids=[mid], documents=[text], embeddings=[vector.tolist()], metadatas=[meta]
        )
        self.keywords.changed([mid], [text])
        return Added(id=mid, merged=False)

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
            created = clean_created_at(m.created_at) if m.created_at else self.now()
            metas.append(
                {
                    **validate_metadata(m.metadata),
                    f"{RESERVED}created_at": created,
                    f"{RESERVED}source": m.source,
                    FLAG: instruction_flag(texts[-1]) or "",
                }
            )
        if len(set(ids)) != len(ids):
            raise MemoryStoreError("Duplicate ids in one batch")
        vectors = np.asarray(self.embed(texts) if embeddings is None else embeddings)
        with self.keywords.lock:
            for start in range(0, len(ids), PAGE):
                end = start + PAGE
                self.collection.upsert(
                    ids=ids[start:end],
                    documents=texts[start:end],
                    embeddings=vectors[start:end].tolist(),
                    metadatas=metas[start:end],
                )
                self.keywords.changed(ids[start:end], texts[start:end])
        return len(ids)

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
        importer = ChunkImporter(
            self.collection,
            self.user_id,
            self.embed,
            functools.partial(chroma.nearest_many, self.collection),
            self.now,
            self.keywords.changed,
        )
        total = ImportResult()
        for start in range(0, len(records), IMPORT_CHUNK):
            chunk = records[start : start + IMPORT_CHUNK]
            with self.keywords.lock:
                total += importer.run(chunk)
            if progress is not None:
                progress(start + len(chunk))
        return replace(total, missing=self._missing(total.ids))

    def _missing(self, ids: Sequence[str]) -> int:
        """How many of `ids` Chroma does not hold: a summary counts what is there, read back."""
        wanted = list(dict.fromkeys(ids))
        found = 0
        for start in range(0, len(wanted), PAGE):
            found += len(self.collection.get(ids=wanted[start : start + PAGE], include=[])["ids"])
        return len(wanted) - found

    def update(self, id: str, text: str) -> Memory:
        """Replace a memory's text (re-embedded); raises MemoryStoreError if it is gone."""
        text = clean_text(text)
        vector = self.embed([text])[0]
        with self.keywords.lock:
            got = self.collection.get(ids=[id], include=["metadatas"])
            if not got["ids"]:
                raise MemoryStoreError(f"No memory with id {id!r} for user {self.user_id!r}")
            meta = self._merge_locked(id, text, vector, dict(got["metadatas"][0] or {}), {})
            return to_memory(id, text, meta)

    def delete(self, id: str) -> bool:
        """Delete one memory; False when there was none with that id."""
        with self.keywords.lock:
            got = self.collection.get(ids=[id], include=[])
            if not got["ids"]:
                return False
            self.collection.delete(ids=[id])
            self.keywords.changed([id], None)
            return True

    def clear(self) -> int:
        """Delete all of this user's memories; returns how many were deleted."""
        with self.keywords.lock:
            ids = list(self.collection.get(include=[])["ids"])
            for start in range(0, len(ids), PAGE):
                self.collection.delete(ids=ids[start : start + PAGE])
            self.keywords.changed(None, None)
            return len(ids)
