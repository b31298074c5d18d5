"""What the reply model is given, without the model: k, the cut-off and near-duplicates.

For each answer set (evaluation/answers), every question is searched as the app
searches it (the message itself, hybrid score), and the memories that hold a gold answer
are found by the same matching the answer score uses. Per k and cut-off it prints:
- memory questions: share whose top k holds a memory with the answer (the reply can be
  right only then);
- general questions: memories that pass the cut-off (what can damage a reply);
- near-duplicates: questions whose top k holds two memories about one thing (cosine at
  least `NEAR`), which a small model may merge or which take two slots for one fact.

    python -m bench answer-retrieval
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from bench.figures import table_head, table_row

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = ROOT / "evaluation" / "answers"
SETS = ("nurse_dev", "founder_dev", "teacher_test")
KS = (1, 3, 5, 8)
CUTOFFS = ("default", -1.0)  # the store's cut-off, and none (mem0-style top k)
NEAR = 0.55  # two memories about one thing: the Pudding pair is 0.59, the sets top at 0.61


def measure(name: str, tmp: Path) -> dict[str, Any]:
    """One set's figures per (cut-off, k)."""
    import numpy as np

    from assistant.eval.answer_data import read_memories, read_questions
    from assistant.eval.answer_match import contains
    from memory.embeddings import shared_model
    from memory.store import Memory, MemoryStore

    memories = read_memories(ANSWERS / f"{name}_memories.jsonl")
    questions = read_questions(ANSWERS / f"{name}_questions.jsonl")
    store = MemoryStore.persistent(tmp / name, "bench")
    # As `eval answers` loads them: every memory as written, near-duplicates included.
    store.add_records([Memory(i, t, None, "", "imported", {}) for i, t in memories])
    texts = [t for _, t in memories]
    vectors = shared_model().encode(texts)
    index = {t: i for i, t in enumerate(texts)}
    out: dict[str, Any] = {}
    for cutoff in CUTOFFS:
        for k in KS:
            held = passed = dupes = 0
            n_mem = n_gen = 0
            for q in questions:
                found = store.search(
                    q.question, k=k, min_similarity=None if cutoff == "default" else cutoff
                )
                ids = [index[m.text] for m in found if m.text in index]
                sims = vectors[ids] @ vectors[ids].T if ids else np.zeros((0, 0))
                dupes += bool(len(ids) > 1 and (np.triu(sims, 1) >= NEAR).any())
                if q.needs_memory:
                    n_mem += 1
                    held += any(contains(m.text, a) for m in found for a in q.answers)
                else:
                    n_gen += 1
                    passed += len(found)
            out[f"{cutoff}/{k}"] = {
                "memory_answer_in_top_k": round(held / n_mem, 3),
                "memories_per_general_question": round(passed / n_gen, 2),
                "questions_with_a_near_duplicate_pair": round(dupes / len(questions), 3),
            }
    store.close()
    return out


def command(args: argparse.Namespace) -> int:
    """Print one table per set."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in SETS:
            figures = measure(name, Path(tmp))
            head = table_head(
                "cut-off",
                "k",
                "memory answer in top k",
                "memories on a general question",
                "questions with a near-duplicate pair",
            )
            print("\n".join(["", name, *head]))
            for key, f in figures.items():
                cutoff, k = key.split("/")
                print(
                    table_row(
                        "store default" if cutoff == "default" else "none",
                        k,
                        f"{f['memory_answer_in_top_k']:.3f}",
                        f"{f['memories_per_general_question']:.2f}",
                        f"{f['questions_with_a_near_duplicate_pair']:.3f}",
                    )
                )
    return 0
