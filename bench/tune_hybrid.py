"""Grid-search the hybrid search's fusion knobs on a LoCoMo-format file (prints a table)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from assistant.eval.recall import locomo_memory_text
from memory.embeddings import shared_model
from memory.lexical import BM25Index


def load(path: Path) -> list[dict]:
    """The conversations of a LoCoMo-format file."""
    data = json.loads(path.read_text())
    return data.get("conversations") or [data["conversation"]]


def recall(ranked: list[list[str]], targets: list[set[str]], k: int) -> float:
    """Share of questions with any target in the top k."""
    return float(np.mean([bool(set(r[:k]) & t) for r, t in zip(ranked, targets, strict=True)]))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench tune-hybrid --help`)."""
    parser.add_argument("locomo", type=Path)


def command(args: argparse.Namespace) -> int:
    """Print recall@5/@10 for text formats x fusion settings."""
    model = shared_model()
    rows = []
    for fmt in ("plain", "speaker", "speaker+caption", "speaker+caption+date"):
        ranked_all: dict[str, list[list[str]]] = {}
        targets_all: list[set[str]] = []
        for conv in load(args.locomo):
            turns = [
                (t["dia_id"], locomo_memory_text(t, s["date_time"], fmt))
                for s in conv["sessions"]
                for t in s["turns"]
            ]
            qa = [q for q in conv["qa"] if q.get("evidence")]
            ids = [i for i, _ in turns]
            doc_vecs = model.encode([t for _, t in turns])
            q_vecs = model.encode([q["question"] for q in qa])
            cos = q_vecs @ doc_vecs.T
            for k1, b in ((1.2, 0.75), (1.5, 0.75), (0.9, 0.4), (1.2, 0.5), (2.0, 0.75)):
                index = BM25Index(k1=k1, b=b)
                index.add_many(turns)
                pos = {i: n for n, i in enumerate(ids)}
                bm = np.zeros_like(cos)
                cov = np.zeros_like(cos)
                for qi, q in enumerate(qa):
                    for doc_id, score, c in index.search(q["question"], k=len(ids)):
                        bm[qi, pos[doc_id]] = score
                        cov[qi, pos[doc_id]] = c
                methods: dict[str, np.ndarray] = {"dense": cos, "bm25": bm}
                rank_d = np.argsort(np.argsort(-cos, axis=1), axis=1)
                rank_b = np.argsort(np.argsort(-bm, axis=1), axis=1)
                for w in (0.5, 0.6, 0.7, 0.8):
                    for c in (10, 60):
                        methods[f"rrf w_lex={w} c={c}"] = w / (c + rank_b) + (1 - w) / (c + rank_d)
                bmax = np.maximum(bm.max(axis=1, keepdims=True), 1e-9)
                for a in (0.2, 0.3, 0.4, 0.5, 0.6):
                    methods[f"convex a_dense={a}"] = a * cos + (1 - a) * bm / bmax
                    methods[f"cos+cov a_dense={a}"] = a * cos + (1 - a) * cov
                    methods[f"cos+cov*bmnorm a_dense={a}"] = a * cos + (1 - a) * cov * bm / bmax
                for name, score in methods.items():
                    order = np.argsort(-score, axis=1, kind="stable")[:, :10]
                    key = f"{fmt:22s} k1={k1} b={b} {name}"
                    ranked_all.setdefault(key, []).extend([[ids[j] for j in o] for o in order])
            targets_all.extend(set(q["evidence"]) for q in qa)
        for key, ranked in ranked_all.items():
            rows.append((recall(ranked, targets_all, 5), recall(ranked, targets_all, 10), key))
    rows.sort(reverse=True)
    for r5, r10, key in rows:
        print(f"{r5:.3f} {r10:.3f} {key}")
    return 0
