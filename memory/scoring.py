"""Hybrid relevance: one absolute score in about [0, 1] from a cosine and keyword coverage.

    similarity = DENSE_WEIGHT * cosine(query, memory) + (1 - DENSE_WEIGHT) * coverage

`coverage` is the share of the query's (idf-weighted) words that occur in the memory. The
weight and the default cut-off were measured, not guessed: see docs/memory.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from memory.tokens import tokenize

# Tuned on LoCoMo conv-26 and checked on all ten conversations (docs/memory.md).
DENSE_WEIGHT = 0.5
# Default relevance cut-off, chosen from persona vs unrelated-question scores (docs/memory.md).
DEFAULT_MIN_SIMILARITY = 0.17
# Each retriever proposes this many candidates (at least 4 x k) before rescoring.
CANDIDATES = 30


def coverage(text: str, idf: Mapping[str, float]) -> float:
    """The share of the query's idf weight whose words occur in `text`."""
    total = sum(idf.values())
    if not total:
        return 0.0
    words = set(tokenize(text))
    return sum(w for t, w in idf.items() if t in words) / total


def rank(
    candidates: Mapping[str, tuple[str, float]], idf: Mapping[str, float], k: int
) -> list[tuple[str, float]]:
    """The k best of {id: (text, cosine)} as (id, score), best first; ties by id."""
    scores = {
        mid: DENSE_WEIGHT * cosine + (1.0 - DENSE_WEIGHT) * coverage(text, idf)
        for mid, (text, cosine) in candidates.items()
    }
    ranked = sorted(scores, key=lambda m: (-scores[m], m))[:k]
    return [(mid, scores[mid]) for mid in ranked]
