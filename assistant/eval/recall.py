"""Memory recall@k: load memories into a fresh temporary store, ask each question, score hits.

Memory lines are {"id", "text"}; question lines are {"question", "memory_id"} or
{"question", "memory_ids": [...]}. A question is a hit when any target is in the top k.
With --locomo, each turn of a LoCoMo-format file is a memory (id = dia_id, text =
"Speaker: words" by default) and each QA's evidence ids are its targets; QA without
evidence are skipped; each conversation gets its own store user.
Figures are reported without and with the store's relevance cut-off.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.eval.stats import percentile
from memory.jsonl import read_jsonl

LOCOMO_TEXT_FORMATS = ("plain", "speaker", "speaker+caption", "speaker+caption+date")


@dataclass
class Question:
    """One question, its target memory ids, and a group (store user) and category."""

    question: str
    targets: set[str]
    group: str = "eval"
    category: str = "all"


@dataclass
class Dataset:
    """Memories per group (each group is searched on its own) and the questions."""

    memories: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)


def locomo_memory_text(turn: dict[str, Any], date_time: str, fmt: str = "speaker") -> str:
    """The text a memory system would store for one LoCoMo turn."""
    text = turn["text"]
    if fmt == "plain":
        return text
    # A chat memory records who said it: questions name the speaker ("When did Caroline...").
    out = f"{turn['speaker']}: {text}"
    if "caption" in fmt and turn.get("blip_caption"):
        # The speaker shared a photo; a chat memory may keep what the photo showed.
        out += f" [shared {turn['blip_caption']}]"
    if "date" in fmt:
        out += f" ({date_time})"
    return out


def load_locomo(path: Path, fmt: str = "speaker") -> Dataset:
    """Read a LoCoMo-format file (one conversation or {"conversations": [...]})."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    convs = data.get("conversations") or [data["conversation"]]
    ds = Dataset()
    for conv in convs:
        group = conv["sample_id"]
        ds.memories[group] = [
            (t["dia_id"], locomo_memory_text(t, s["date_time"], fmt))
            for s in conv["sessions"]
            for t in s["turns"]
        ]
        for qa in conv["qa"]:
            if qa.get("evidence"):
                ds.questions.append(
                    Question(
                        qa["question"],
                        set(qa["evidence"]),
                        group,
                        qa.get("category_name", str(qa.get("category", "all"))),
                    )
                )
    return ds


def load_jsonl(memories: Path, questions: Path) -> Dataset:
    """Read {"id", "text"} memory lines and {"question", "memory_id(s)"} question lines."""
    ds = Dataset()
    ds.memories["eval"] = [(str(row["id"]), row["text"]) for _, row in read_jsonl(memories)]
    for n, row in read_jsonl(questions):
        targets = row.get("memory_ids") or ([row["memory_id"]] if "memory_id" in row else [])
        if not targets:
            raise ValueError(f"{questions}:{n}: question has no memory_id / memory_ids")
        ds.questions.append(
            Question(
                row["question"], {str(t) for t in targets}, category=str(row.get("category", "all"))
            )
        )
    return ds


def _figures(rows: list[dict[str, Any]], k: int) -> dict[str, Any]:
    n = len(rows)
    return {
        "n": n,
        "k": k,
        "recall_at_k": round(sum(r["hit"] for r in rows) / n, 4) if n else 0.0,
        "mrr": round(sum(r["rr"] for r in rows) / n, 4) if n else 0.0,
    }


def evaluate(
    ds: Dataset, k: int = 5, min_similarity: float | None = None, by_category: bool = False
) -> dict[str, Any]:
    """Load `ds` into temporary stores and score every question; returns the report dict."""
    from memory.embeddings import shared_model
    from memory.store import Memory, MemoryStore

    model = shared_model()
    model.warm()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memgate-recall-") as tmp:
        stores: dict[str, MemoryStore] = {}
        for group, mems in ds.memories.items():
            store = MemoryStore.persistent(tmp, group, min_similarity=min_similarity)
            # Records go in as they are: LoCoMo has near-identical turns that must stay
            # separate, so the near-duplicate merge of remember() is bypassed here.
            store.add_records([Memory(i, t, None, "", "imported", {}) for i, t in mems])
            stores[group] = store
        cutoff = next(iter(stores.values())).min_similarity if stores else 0.0
        for q in ds.questions:
            start = time.perf_counter()
            found = stores[q.group].scored(q.question, k)
            ms = (time.perf_counter() - start) * 1000
            ids = [m.id for m in found]
            kept = [m.id for m in found if (m.similarity or 0.0) >= cutoff]
            rows.append(
                {
                    "category": q.category,
                    "ms": ms,
                    "hit": bool(set(ids) & q.targets),
                    "rr": next((1 / (i + 1) for i, m in enumerate(ids) if m in q.targets), 0.0),
                    "hit_cut": bool(set(kept) & q.targets),
                    "rr_cut": next(
                        (1 / (i + 1) for i, m in enumerate(kept) if m in q.targets), 0.0
                    ),
                    "returned_cut": len(kept),
                }
            )
    times = [r["ms"] for r in rows]
    report = _figures(rows, k)
    report["p50_ms"] = round(statistics.median(times), 2) if times else 0.0
    report["p95_ms"] = round(percentile(times, 0.95), 2)
    report["with_cutoff"] = _cutoff_figures(rows, k, cutoff)
    if by_category:
        cats = sorted({r["category"] for r in rows})
        report["by_category"] = {
            c: {
                **_figures([r for r in rows if r["category"] == c], k),
                "with_cutoff": _cutoff_figures([r for r in rows if r["category"] == c], k, cutoff),
            }
            for c in cats
        }
    return report


def _cutoff_figures(rows: list[dict[str, Any]], k: int, cutoff: float) -> dict[str, Any]:
    cut = [{"hit": r["hit_cut"], "rr": r["rr_cut"]} for r in rows]
    out = _figures(cut, k)
    out["min_similarity"] = cutoff
    out["mean_returned"] = (
        round(sum(r["returned_cut"] for r in rows) / len(rows), 2) if rows else 0.0
    )
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the recall options on `parser`."""
    src = parser.add_argument_group("data (either --memories + --questions, or --locomo)")
    src.add_argument("--memories", type=Path, help='JSONL of {"id", "text"}')
    src.add_argument(
        "--questions",
        type=Path,
        help='JSONL of {"question", "memory_id"} or {"question", "memory_ids"}',
    )
    src.add_argument("--locomo", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument(
        "--locomo-text",
        choices=LOCOMO_TEXT_FORMATS,
        default="speaker",
        help="what a LoCoMo memory's text holds (default: 'Speaker: words')",
    )
    parser.add_argument("--k", type=int, default=5, help="top-k to score (default 5)")
    parser.add_argument(
        "--min-similarity",
        type=float,
        default=None,
        help="cut-off for the with_cutoff figures (default: the store's)",
    )
    parser.add_argument(
        "--by",
        choices=["category"],
        default=None,
        help="also break the figures down by question category",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run the evaluation described by parsed `args`; returns the exit status."""
    if args.locomo:
        ds = load_locomo(args.locomo, args.locomo_text)
    elif args.memories and args.questions:
        ds = load_jsonl(args.memories, args.questions)
    else:
        print("error: give --locomo PATH, or both --memories and --questions", file=sys.stderr)
        return 2
    if args.k < 1:
        print("error: --k must be at least 1", file=sys.stderr)
        return 2
    report = evaluate(ds, args.k, args.min_similarity, by_category=args.by == "category")
    if args.json:
        print(json.dumps(report))
        return 0
    cut = report["with_cutoff"]
    print(
        f"n={report['n']} k={report['k']} recall@k={report['recall_at_k']:.3f} "
        f"mrr={report['mrr']:.3f} p50={report['p50_ms']:.1f} ms p95={report['p95_ms']:.1f} ms"
    )
    print(
        f"with cut-off {cut['min_similarity']}: recall@k={cut['recall_at_k']:.3f} "
        f"mrr={cut['mrr']:.3f} mean returned={cut['mean_returned']}"
    )
    for cat, fig in report.get("by_category", {}).items():
        print(
            f"  {cat:28s} n={fig['n']:4d} recall@k={fig['recall_at_k']:.3f} "
            f"with cut-off={fig['with_cutoff']['recall_at_k']:.3f}"
        )
    return 0
