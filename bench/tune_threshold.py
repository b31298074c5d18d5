"""Measure top similarity scores for persona questions vs unrelated messages (picks the cut-off)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from memory.jsonl import read_jsonl
from memory.persona import QUESTIONS_PATH, UNRELATED_PATH, seed_demo
from memory.store import MemoryStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench tune-threshold --help`)."""
    parser.add_argument(
        "--external",
        type=Path,
        default=None,
        help="optional gate_external.jsonl: its retrieve=false messages are "
        "added to the unrelated set",
    )


def command(args: argparse.Namespace) -> int:
    """Print score quantiles and the recall / false-injection trade-off per threshold."""
    unrelated = [r["question"] for _, r in read_jsonl(UNRELATED_PATH)]
    if args.external:
        unrelated += [r["message"] for _, r in read_jsonl(args.external) if r["retrieve"] is False]
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore.persistent(tmp, "threshold")
        seed_demo(store)
        target_scores, top_scores = [], []
        for _, row in read_jsonl(QUESTIONS_PATH):
            found = store.scored(row["question"], 5)
            hits = [m.similarity for m in found if m.id in row["memory_ids"]]
            target_scores.append(max(hits) if hits else -1.0)
        for q in unrelated:
            found = store.scored(q, 1)
            top_scores.append(found[0].similarity if found else -1.0)
    t, u = np.array(target_scores), np.array(top_scores)
    print(f"relevant: n={len(t)} quantiles 5/25/50%: {np.percentile(t, [5, 25, 50]).round(3)}")
    print(
        f"unrelated top-1: n={len(u)} quantiles 50/90/95/99/max: "
        f"{np.percentile(u, [50, 90, 95, 99, 100]).round(3)}"
    )
    print("threshold  relevant_kept  unrelated_injected")
    for thr in np.arange(0.15, 0.351, 0.01):
        print(f"{thr:9.3f}  {np.mean(t >= thr):13.3f}  {np.mean(u >= thr):18.3f}")
    print(
        json.dumps(
            {
                "relevant": sorted(t.round(3).tolist()),
                "unrelated_top": sorted(u.round(3).tolist())[-15:],
            }
        )
    )
    return 0
