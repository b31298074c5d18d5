"""A BM25 index in numpy that saves and loads in one read: the lexical half of memory search."""

from __future__ import annotations

import json
import math
import os
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from memory.tokens import tokenize

__all__ = ["SNAPSHOT_FORMAT", "BM25Index", "tokenize"]  # tokenize: where callers found it

# Bump when the saved layout or the tokens (memory/tokens.py) change: an older snapshot
# is then rebuilt, never misread.
SNAPSHOT_FORMAT = 7


class _Postings:
    """Slots and term frequencies appended to one term since the last compaction."""

    __slots__ = ("slots", "tfs", "_arrays")

    def __init__(self) -> None:
        self.slots: list[int] = []
        self.tfs: list[int] = []
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            self._arrays = (
                np.asarray(self.slots, dtype=np.int64),
                np.asarray(self.tfs, dtype=np.float32),
            )
        return self._arrays


class BM25Index:
    """Okapi BM25 over documents keyed by id; add, remove, search, save and load.

    The index has two parts. A compacted *base* holds term -> (slots, tfs) and
    doc -> (terms, tfs) as flat numpy arrays, so it saves and loads in one read; a *delta*
    of Python lists takes the documents added since. Removal only marks a slot dead.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._lock = threading.RLock()
        self._reset_locked()

    def _reset_locked(self) -> None:
        # State only: the lock survives a reset so waiting threads stay serialised.
        self._vocab: dict[str, int] = {}
        self._words: list[str] = []
        self._df: list[int] = []
        self._base_ptr = np.zeros(1, dtype=np.int64)
        self._base_slots = np.zeros(0, dtype=np.int64)
        self._base_tfs = np.zeros(0, dtype=np.float32)
        self._doc_ptr = np.zeros(1, dtype=np.int64)
        self._doc_terms = np.zeros(0, dtype=np.int64)
        self._doc_tfs = np.zeros(0, dtype=np.int64)
        self._n_base = 0
        self._delta: dict[int, _Postings] = {}
        self._delta_terms: list[tuple[tuple[int, int], ...]] = []
        self._ids: list[str | None] = []
        self._slot_of: dict[str, int] = {}
        self._lengths = np.zeros(0, dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._total_len = 0
        self._dead = 0

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot_of

    def _grow(self, need: int) -> None:
        # Amortised doubling: appending 100k documents one at a time stays linear.
        if need <= len(self._lengths):
            return
        size = max(need, 2 * len(self._lengths), 1024)
        lengths = np.zeros(size, dtype=np.float32)
        alive = np.zeros(size, dtype=bool)
        lengths[: len(self._lengths)] = self._lengths
        alive[: len(self._alive)] = self._alive
        self._lengths, self._alive = lengths, alive

    def add(self, doc_id: str, text: str) -> None:
        """Index `text` under `doc_id`, replacing any previous text for that id."""
        self.add_many([(doc_id, text)])

    def add_many(self, docs: Iterable[tuple[str, str]]) -> None:
        """Index many (id, text) pairs; tokenising happens outside the lock."""
        prepared = [(doc_id, Counter(tokenize(text))) for doc_id, text in docs]
        with self._lock:
            self._grow(len(self._ids) + len(prepared))
            for doc_id, counts in prepared:
                if doc_id in self._slot_of:
                    self._remove_locked(doc_id)
                self._insert_locked(doc_id, counts)
            self._maybe_compact()

    def remove(self, doc_id: str) -> bool:
        """Forget `doc_id`; returns False when it was not indexed."""
        with self._lock:
            if doc_id not in self._slot_of:
                return False
            self._remove_locked(doc_id)
            self._maybe_compact()
            return True

    def clear(self) -> None:
        """Drop every document."""
        with self._lock:
            self._reset_locked()

    def _slot_terms(self, slot: int) -> Iterable[tuple[int, int]]:
        if slot < self._n_base:
            lo, hi = self._doc_ptr[slot], self._doc_ptr[slot + 1]
            return zip(self._doc_terms[lo:hi].tolist(), self._doc_tfs[lo:hi].tolist(), strict=True)
        return self._delta_terms[slot - self._n_base]

    def _remove_locked(self, doc_id: str) -> None:
        # The slot stays in the postings until the next compaction; search masks it out.
        slot = self._slot_of.pop(doc_id)
        for term, _tf in self._slot_terms(slot):
            self._df[term] -= 1
        self._alive[slot] = False
        self._total_len -= int(self._lengths[slot])
        self._ids[slot] = None
        if slot >= self._n_base:
            self._delta_terms[slot - self._n_base] = ()
        self._dead += 1

    def _maybe_compact(self) -> None:
        # Rebuild when over a third of the slots are dead, so postings do not grow forever.
        if self._dead > 64 and self._dead * 3 > len(self._ids):
            self._compact_locked()

    def _insert_locked(self, doc_id: str, counts: Counter[str]) -> None:
        slot = len(self._ids)
        self._grow(slot + 1)
        vocab, words, df, delta = self._vocab, self._words, self._df, self._delta
        pairs = []
        length = 0
        # Inlined appends: this loop runs once per (document, term) on a rebuild.
        for word, tf in counts.items():
            term = vocab.get(word)
            if term is None:
                term = vocab[word] = len(words)
                words.append(word)
                df.append(0)
            postings = delta.get(term)
            if postings is None:
                postings = delta[term] = _Postings()
            postings.slots.append(slot)
            postings.tfs.append(tf)
            postings._arrays = None
            df[term] += 1
            length += tf
            pairs.append((term, tf))
        self._ids.append(doc_id)
        self._delta_terms.append(tuple(pairs))
        self._slot_of[doc_id] = slot
        self._lengths[slot] = length
        self._alive[slot] = True
        self._total_len += length

    def _compact_locked(self) -> None:
        """Fold the delta into the base and drop dead slots and unused words."""
        counts = np.diff(self._doc_ptr)
        keep_base = self._alive[: self._n_base]
        entry_keep = np.repeat(keep_base, counts)
        terms = [self._doc_terms[entry_keep]]
        tfs = [self._doc_tfs[entry_keep]]
        lengths = [counts[keep_base]]
        extra_terms: list[int] = []
        extra_tfs: list[int] = []
        extra_len: list[int] = []
        for i, pairs in enumerate(self._delta_terms):
            if self._ids[self._n_base + i] is None:
                continue
            extra_terms.extend(t for t, _ in pairs)
            extra_tfs.extend(f for _, f in pairs)
            extra_len.append(len(pairs))
        terms.append(np.asarray(extra_terms, dtype=np.int64))
        tfs.append(np.asarray(extra_tfs, dtype=np.int64))
        lengths.append(np.asarray(extra_len, dtype=np.int64))
        ids = [i for i in self._ids if i is not None]
        doc_terms = np.concatenate(terms)
        doc_tfs = np.concatenate(tfs)
        per_doc = np.concatenate(lengths)
        df = np.asarray(self._df, dtype=np.int64)
        used = df > 0
        remap = np.cumsum(used) - 1
        words = [w for w, u in zip(self._words, used.tolist(), strict=True) if u]
        self._install(
            ids, words, remap[doc_terms] if doc_terms.size else doc_terms, doc_tfs, per_doc
        )

    def _install(
        self,
        ids: list[str],
        words: list[str],
        doc_terms: np.ndarray,
        doc_tfs: np.ndarray,
        per_doc: np.ndarray | None,
        saved: dict[str, np.ndarray] | None = None,
    ) -> None:
        # Build the base from the doc -> terms arrays: one stable sort gives term -> slots.
        # A snapshot stores what this derives (`saved`), so loading only reads arrays.
        n = len(ids)
        if saved is None:
            doc_ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(per_doc, out=doc_ptr[1:])
            slot_of_entry = np.repeat(np.arange(n, dtype=np.int32), per_doc)
            df = np.bincount(doc_terms, minlength=len(words)).astype(np.int64)
            order = np.argsort(doc_terms, kind="stable")
            base_ptr = np.zeros(len(words) + 1, dtype=np.int64)
            np.cumsum(df, out=base_ptr[1:])
            by_term = (base_ptr, slot_of_entry[order], doc_tfs[order].astype(np.float32))
            weights = doc_tfs.astype(np.float64)
            lengths = np.bincount(slot_of_entry, weights=weights, minlength=n).astype(np.float32)
        else:
            doc_ptr, df, lengths = saved["doc_ptr"], saved["df"], saved["lengths"]
            by_term = (saved["base_ptr"], saved["base_slots"], saved["base_tfs"])
        self._reset_locked()
        self._vocab = dict(zip(words, range(len(words)), strict=True))
        self._words = list(words)
        self._df = df.tolist()
        self._base_ptr, self._base_slots, self._base_tfs = by_term
        self._doc_ptr, self._doc_terms, self._doc_tfs = doc_ptr, doc_terms, doc_tfs
        self._n_base = n
        self._ids = list(ids)
        self._slot_of = dict(zip(ids, range(n), strict=True))
        self._grow(n)
        self._lengths[:n] = lengths
        self._alive[:n] = True
        self._total_len = int(lengths.sum())

    def _postings_of(self, term: int) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        if term < len(self._base_ptr) - 1:
            lo, hi = self._base_ptr[term], self._base_ptr[term + 1]
            if hi > lo:
                out.append((self._base_slots[lo:hi], self._base_tfs[lo:hi]))
        extra = self._delta.get(term)
        if extra is not None:
            out.append(extra.arrays())
        return out

    def idf(self, query: str) -> dict[str, float]:
        """Each distinct query word (tokenised) and its BM25 idf in the current index."""
        terms = list(dict.fromkeys(tokenize(query)))
        with self._lock:
            return {t: self._idf_locked(t) for t in terms}

    def document_frequency(self, text: str) -> dict[str, int]:
        """Each distinct word of `text` (tokenised) and how many documents contain it."""
        terms = list(dict.fromkeys(tokenize(text)))
        with self._lock:
            return {t: self._df[i] if (i := self._vocab.get(t)) is not None else 0 for t in terms}

    def _idf_locked(self, word: str) -> float:
        n = len(self._slot_of)
        term = self._vocab.get(word)
        df = self._df[term] if term is not None else 0
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: str, k: int = 10) -> list[tuple[str, float, float]]:
        """Top-k (id, bm25, coverage); coverage is the share of query idf the doc matches."""
        terms = list(dict.fromkeys(tokenize(query)))
        with self._lock:
            n = len(self._slot_of)
            if n == 0 or not terms or k <= 0:
                return []
            avgdl = max(self._total_len / n, 1.0)
            used = len(self._ids)
            scores = np.zeros(used, dtype=np.float32)
            # Coverage needs per-term idf even for terms no document has.
            idf_total = 0.0
            matched = np.zeros(used, dtype=np.float32)
            norm = self.k1 * (1.0 - self.b + self.b * self._lengths[:used] / avgdl)
            for word in terms:
                idf = self._idf_locked(word)
                idf_total += idf
                term = self._vocab.get(word)
                if term is None:
                    continue
                for slots, tfs in self._postings_of(term):
                    scores[slots] += idf * tfs * (self.k1 + 1.0) / (tfs + norm[slots])
                    matched[slots] += idf
            scores[~self._alive[:used]] = 0.0
            hits = np.flatnonzero(scores > 0)
            if hits.size == 0:
                return []
            top = hits[np.argpartition(-scores[hits], k - 1)[:k]] if hits.size > k else hits
            top = top[np.argsort(-scores[top], kind="stable")]
            ids = self._ids
            return [
                (ids[s], float(scores[s]), float(matched[s] / idf_total))  # type: ignore[misc]
                for s in top
            ]

    # ---- snapshots ----------------------------------------------------------------

    def save(self, path: Path, info: dict[str, Any]) -> None:
        """Write the index and `info` (JSON) to `path` atomically."""
        with self._lock:
            self._compact_locked()
            arrays = {
                "doc_ptr": self._doc_ptr.astype(np.int64),
                "doc_terms": self._doc_terms.astype(np.int32),
                "doc_tfs": self._doc_tfs.astype(np.int32),
                "base_ptr": self._base_ptr.astype(np.int64),
                "base_slots": self._base_slots.astype(np.int32),
                "base_tfs": self._base_tfs.astype(np.float32),
                "df": np.asarray(self._df, dtype=np.int64),
                "lengths": self._lengths[: len(self._ids)].astype(np.float32),
                "words": np.frombuffer("\n".join(self._words).encode(), dtype=np.uint8),
                "ids": np.frombuffer(json.dumps(self._ids).encode(), dtype=np.uint8),
            }
        # One file: a JSON header (info, and each array's dtype, offset and length), then
        # the raw arrays. Loading is one read plus views, no unzipping or copying.
        layout, offset = {}, 0
        for name, array in arrays.items():
            layout[name] = [array.dtype.str, offset, int(array.size)]
            offset += array.nbytes
        header = json.dumps({**info, "format": SNAPSHOT_FORMAT, "arrays": layout}).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            fh.write(len(header).to_bytes(8, "little"))
            fh.write(header)
            for array in arrays.values():
                fh.write(array.tobytes())
        os.replace(tmp, path)  # readers see the old file or the new one, never half

    @classmethod
    def load(cls, path: Path) -> tuple[BM25Index, dict[str, Any]] | None:
        """The index and info saved at `path`, or None when there is none in this format."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        size = int.from_bytes(raw[:8], "little")
        try:
            info = json.loads(raw[8 : 8 + size])
        except ValueError:
            return None  # not a snapshot of ours (or an older layout): rebuild
        if not isinstance(info, dict) or info.get("format") != SNAPSHOT_FORMAT:
            return None
        body = memoryview(raw)[8 + size :]
        try:
            arrays = {
                name: np.frombuffer(body, dtype=np.dtype(dtype), count=count, offset=offset)
                for name, (dtype, offset, count) in info.pop("arrays").items()
            }
        except ValueError:
            return None  # cut short (a full disk, a copy interrupted): rebuild from Chroma
        words_raw = arrays["words"].tobytes().decode()
        words = words_raw.split("\n") if words_raw else []
        ids = json.loads(arrays["ids"].tobytes())
        index = cls()
        index._install(ids, words, arrays["doc_terms"], arrays["doc_tfs"], None, arrays)
        return index, info
