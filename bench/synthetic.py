"""Synthetic memories and questions, seeded, for the store's benchmarks.

Templated first-person sentences and the questions a gate writes, from the words in
bench/data/synthetic_memories.json; and, for stores too large to embed text by text, a pool
of real sentence embeddings combined two at a time (bench/memory_bench.py says why).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

# Words combined into synthetic memories and questions: bench/data/synthetic_memories.json.
_WORDS = json.loads(
    (ROOT / "bench" / "data" / "synthetic_memories.json").read_text(encoding="utf-8")
)
NAMES: list[str] = _WORDS["names"]
VERBS: list[str] = _WORDS["verbs"]
PLACES: list[str] = _WORDS["places"]
WHENS: list[str] = _WORDS["whens"]
TOPICS: list[str] = _WORDS["topics"]


def sentence(rng: random.Random) -> str:
    """One templated first-person memory sentence."""
    kind = rng.randrange(3)
    if kind == 0:
        verb = rng.choice(VERBS).replace("is ", "am ")
        return f"I {verb} {rng.choice(NAMES)} at {rng.choice(PLACES)} {rng.choice(WHENS)}."
    if kind == 1:
        return f"{rng.choice(NAMES)} told me about {rng.choice(TOPICS)} {rng.choice(WHENS)}."
    return f"Reminder: {rng.choice(TOPICS)} with {rng.choice(NAMES)} {rng.choice(WHENS)}."


def question(rng: random.Random) -> str:
    """One templated question of the kind the gate writes."""
    forms = [
        "When am I seeing {n}?",
        "What did {n} say about {t}?",
        "Where am I meeting {n}?",
        "What's happening with {t}?",
        "Who is coming to {p}?",
        "Any plans with {n} {w}?",
    ]
    return rng.choice(forms).format(
        n=rng.choice(NAMES), t=rng.choice(TOPICS), p=rng.choice(PLACES), w=rng.choice(WHENS)
    )


def sentence_pool(rng: random.Random) -> tuple[list[str], np.ndarray]:
    """1,500 templated sentences and their real embeddings."""
    from memory.embeddings import shared_model

    pool = sorted({sentence(rng) for _ in range(6000)})[:1500]
    return pool, shared_model().encode(pool)


def pooled_memories(
    size: int, rng: random.Random, pool: list[str], vecs: np.ndarray
) -> tuple[list, Any]:
    """`size` memories of two pool sentences each, with the normalised sum of their vectors."""
    from memory.records import Memory

    a = np.array([rng.randrange(len(pool)) for _ in range(size)])
    b = np.array([rng.randrange(len(pool)) for _ in range(size)])
    out = vecs[a] + vecs[b]
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    mems = [
        Memory(f"m{i}", f"{pool[x]} {pool[y]} (note {i})", None, "", "imported", {})
        for i, (x, y) in enumerate(zip(a, b, strict=True))
    ]
    return mems, out
