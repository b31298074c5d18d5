"""Follow-ups on the retrieval side, without a reply model: what the last turn is given.

Each conversation of the follow-up sets (training/data/answers/followup_*) is played
through the app's own turn (`Chat.answer`, the local gate, the real store) with the
offline responder standing in for the reply model, with the conversation resolver on and
off. For the last turn it prints:
- memory follow-ups: the share whose memories hold a gold answer (a reply can be right
  only then), and the share that searched at all;
- general follow-ups: the share that searched, and memories sent (what can damage a reply);
- per query option, memory follow-ups whose top k holds the answer, decision aside: the
  message alone, the message with the turn it continues, and the resolver's query;
- the local gate's decision time with the resolver, p50 and p95, and the memory
  follow-ups' search time, p50 (a follow-up is searched once per reading).

    python -m bench followup-retrieval [--sets followup_nurse_dev,followup_founder_dev,...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.local_model_bench import table_row

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = ROOT / "training" / "data" / "answers"
DEV_SETS = ("followup_nurse_dev", "followup_founder_dev", "followup_pilot_dev")
_PERSONA = {"followup_nurse_dev": "nurse_dev", "followup_founder_dev": "founder_dev"}


def memories_file(name: str) -> Path:
    """The memories a follow-up set is asked over."""
    own = ANSWERS / f"{name}_memories.jsonl"
    return own if own.exists() else ANSWERS / f"{_PERSONA[name]}_memories.jsonl"


def measure(name: str, tmp: Path) -> dict[str, Any]:
    """One set's figures, resolver on and off."""
    from assistant.chat import Chat, TurnOptions
    from assistant.eval.answer_data import read_memories, read_questions
    from assistant.eval.answer_match import contains
    from assistant.followup import resolve
    from assistant.gates.local import LocalGate
    from assistant.offline import OfflineResponder
    from assistant.pipeline import Pipeline
    from memory.records import Memory
    from memory.store import MemoryStore

    store = MemoryStore.persistent(tmp / name, "bench")
    store.add_records(
        [Memory(i, t, None, "", "imported", {}) for i, t in read_memories(memories_file(name))]
    )
    questions = [q for q in read_questions(ANSWERS / f"{name}_questions.jsonl") if q.earlier]
    gate = LocalGate()
    gate.warm()
    out: dict[str, Any] = {}
    for conversation in (False, True):
        pipeline = Pipeline(
            gate=gate, store=store, responder=OfflineResponder(), conversation=conversation
        )
        chat = Chat.fixed(pipeline)
        held = searched_mem = searched_gen = sent_mem = sent_gen = n_mem = n_gen = 0
        options: dict[str, int] = {"message alone": 0, "with the turn it continues": 0}
        options["resolver's query"] = 0
        gate_ms: list[float] = []
        search_ms: list[float] = []  # memory follow-ups' searches, every reading included
        for q in questions:
            history: list[Any] = []
            for text in q.earlier:
                history.append(chat.answer(text, history, TurnOptions(capture=False)))
            gate.encoder().clear_cache()  # time the model, not the cache of the other pass
            last = chat.answer(q.question, history, TurnOptions(capture=False)).gated
            gate_ms.append(last.timings.gate_ms)
            if q.needs_memory:
                n_mem += 1
                searched_mem += last.searched
                if last.searched:
                    search_ms.append(last.timings.search_ms)
                sent_mem += len(last.memories)
                held += any(contains(m.text, a) for m in last.memories for a in q.answers)
                if conversation:
                    said = [e.gated.said() for e in history]
                    queries = {
                        "message alone": q.question,
                        "with the turn it continues": f"{q.earlier[-1]} {q.question}",
                        "resolver's query": resolve(q.question, said, store.mentions).query,
                    }
                    for option, query in queries.items():
                        found = store.search(query, k=pipeline.k)
                        options[option] += any(
                            contains(m.text, a) for m in found for a in q.answers
                        )
            else:
                n_gen += 1
                searched_gen += last.searched
                sent_gen += len(last.memories)
        key = "resolver" if conversation else "message alone"
        out[key] = {
            "memory_answer_given": round(held / n_mem, 3),
            "memory_searched": round(searched_mem / n_mem, 3),
            "general_searched": round(searched_gen / max(n_gen, 1), 3),
            "memories_per_general": round(sent_gen / max(n_gen, 1), 2),
            # Memories beside the answer are what the 1.5B model misreads (docs/followups.md).
            "memories_per_memory": round(sent_mem / n_mem, 2),
            "gate_p50_ms": round(statistics.median(gate_ms), 1),
            "gate_p95_ms": round(sorted(gate_ms)[int(0.95 * (len(gate_ms) - 1))], 1),
            "search_p50_ms": round(statistics.median(search_ms), 1) if search_ms else 0.0,
            "n_memory": n_mem,
            "n_general": n_gen,
        }
        if conversation:
            out["query_options"] = {k: round(v / n_mem, 3) for k, v in options.items()}
    store.close()
    return out


def run(sets: tuple[str, ...] = DEV_SETS) -> dict[str, Any]:
    """Every set's figures, in one temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        return {name: measure(name, Path(tmp)) for name in sets}


def markdown(results: dict[str, Any]) -> str:
    """One table per set: the last turn with and without the resolver, and per query."""
    lines: list[str] = []
    for name, f in results.items():
        n_mem, n_gen = f["resolver"]["n_memory"], f["resolver"]["n_general"]
        lines += [
            f"**{name}**: {n_mem} memory follow-ups, {n_gen} general follow-ups (local gate, "
            "offline responder: what the last turn is given, no reply model)",
            "",
            "| local gate | memory: answer given | memory: searched | memories per memory "
            "| general: searched | memories per general | gate p50 ms | gate p95 ms "
            "| memory search p50 ms |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for key in ("message alone", "resolver"):
            r = f[key]
            lines.append(
                table_row(
                    key,
                    f"{r['memory_answer_given']:.3f}",
                    f"{r['memory_searched']:.3f}",
                    f"{r['memories_per_memory']:.2f}",
                    f"{r['general_searched']:.3f}",
                    f"{r['memories_per_general']:.2f}",
                    r["gate_p50_ms"],
                    r["gate_p95_ms"],
                    r["search_p50_ms"],
                )
            )
        lines += ["", "| query, decision aside | memory answer in top k |", "|---|---:|"]
        lines += [table_row(option, f"{share:.3f}") for option, share in f["query_options"].items()]
        lines.append("")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench followup-retrieval --help`)."""
    parser.add_argument("--sets", default=",".join(DEV_SETS))


def command(args: argparse.Namespace) -> int:
    """Print one table per set."""
    print(markdown(run(tuple(args.sets.split(",")))))
    return 0
