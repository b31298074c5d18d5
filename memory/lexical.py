"""An incremental BM25 index in numpy: the lexical half of the hybrid memory search."""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

# Function words carry no topic; dropping them keeps postings short and scores sharp.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn aren weren won wouldn shouldn couldn hasn haven
    hadn im ive id youre thats whats hey oh yeah yes wow really also get got like know think
    one thing things much lot well just so""".split()
)

_TOKEN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light English suffix stripper: enough to match plurals and -ing/-ed forms."""
    # Why not Porter: on short chat memories its aggressive rules merge unrelated words
    # ("university"/"universe"); plurals and verb endings give most of the gain.
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            # "running" -> "runn" -> "run": undo the doubled consonant the suffix left.
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    return word


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens without stopwords, stemmed."""
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class _Postings:
    """Slots and term frequencies of one term; numpy views are rebuilt lazily after appends."""

    __slots__ = ("slots", "tfs", "_arrays")

    def __init__(self) -> None:
        self.slots: list[int] = []
        self.tfs: list[int] = []
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def append(self, slot: int, tf: int) -> None:
        self.slots.append(slot)
        self.tfs.append(tf)
        self._arrays = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            self._arrays = (
                np.asarray(self.slots, dtype=np.int64),
                np.asarray(self.tfs, dtype=np.float32),
            )
        return self._arrays


class BM25Index:
    """Okapi BM25 over documents keyed by id; add, remove and search are all incremental."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._lock = threading.RLock()
        self._reset_locked()

    def _reset_locked(self) -> None:
        # State only: the lock survives a reset so waiting threads stay serialised.
        self._postings: dict[str, _Postings] = {}
        self._df: Counter[str] = Counter()
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._terms: list[tuple[tuple[str, int], ...]] = []
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
        prepared = [(doc_id, tokenize(text)) for doc_id, text in docs]
        with self._lock:
            self._grow(len(self._ids) + len(prepared))
            for doc_id, terms in prepared:
                if doc_id in self._slot_of:
                    self._remove_locked(doc_id)
                self._insert_locked(doc_id, tuple(Counter(terms).items()))
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

    def _remove_locked(self, doc_id: str) -> None:
        # Removal only marks the slot dead; postings keep it until the next compaction,
        # and search masks dead slots out. That keeps delete O(terms in the doc).
        slot = self._slot_of.pop(doc_id)
        for term, _tf in self._terms[slot]:
            self._df[term] -= 1
            if self._df[term] <= 0:
                del self._df[term]
        self._alive[slot] = False
        self._total_len -= int(self._lengths[slot])
        self._ids[slot] = None
        self._terms[slot] = ()
        self._dead += 1

    def _maybe_compact(self) -> None:
        # Rebuild when over a third of the slots are dead, so postings do not grow forever.
        if self._dead > 64 and self._dead * 3 > len(self._ids):
            live = [(doc_id, self._terms[slot]) for doc_id, slot in self._slot_of.items()]
            self._reset_locked()
            self._grow(len(live))
            for doc_id, pairs in live:
                self._insert_locked(doc_id, pairs)

    def _insert_locked(self, doc_id: str, pairs: tuple[tuple[str, int], ...]) -> None:
        slot = len(self._ids)
        self._grow(slot + 1)
        length = 0
        all_postings, df = self._postings, self._df
        # Inlined appends: this loop runs once per (document, term) when 100k memories
        # are re-indexed at open, so method-call overhead shows in the cold-open time.
        for term, tf in pairs:
            postings = all_postings.get(term)
            if postings is None:
                postings = all_postings[term] = _Postings()
            postings.slots.append(slot)
            postings.tfs.append(tf)
            postings._arrays = None
            df[term] += 1
            length += tf
        self._ids.append(doc_id)
        self._terms.append(pairs)
        self._slot_of[doc_id] = slot
        self._lengths[slot] = length
        self._alive[slot] = True
        self._total_len += length

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
            for term in terms:
                df = self._df.get(term, 0)
                idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
                idf_total += idf
                if df == 0:
                    continue
                slots, tfs = self._postings[term].arrays()
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

    def coverage(self, query: str, doc_ids: list[str]) -> list[float]:
        """The matched share of the query's idf mass for each of `doc_ids` (0 if unknown)."""
        terms = list(dict.fromkeys(tokenize(query)))
        with self._lock:
            n = len(self._slot_of)
            if not terms or n == 0:
                return [0.0] * len(doc_ids)
            idf = {
                t: math.log(1.0 + (n - self._df.get(t, 0) + 0.5) / (self._df.get(t, 0) + 0.5))
                for t in terms
            }
            total = sum(idf.values())
            out = []
            for doc_id in doc_ids:
                slot = self._slot_of.get(doc_id)
                if slot is None:
                    out.append(0.0)
                    continue
                present = {t for t, _ in self._terms[slot]}
                out.append(sum(v for t, v in idf.items() if t in present) / total)
            return out
