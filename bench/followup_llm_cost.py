"""What reading the conversation costs the `llm` gate on the built-in model, in time.

For the last turn of every conversation in the follow-up dev sets, the built-in model's
`llm` gate (llama.cpp's native endpoint, one token read) decides twice in the same run:
on the message alone, as before issue 28, and with the last exchanges, which it reads as
the resolver's standalone text. The order alternates per row, so neither reading always
finds the prompt cache warmer. Prints p50 and p95 of each and their ratio, and how often
each retrieved the memory follow-ups.

    python -m bench followup-llm-cost
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from bench.figures import table_head, table_row

ANSWERS = Path(__file__).resolve().parent.parent / "evaluation" / "answers"
DEV = ("followup_nurse_dev", "followup_founder_dev")


def run() -> dict[str, Any]:
    """Both readings per last turn, timed in the same run."""
    from assistant.config import Settings
    from assistant.conversation.said import Said
    from assistant.eval.answer_data import read_questions
    from assistant.eval.answers import start_model
    from assistant.gates.base import Conversation
    from assistant.gates.registry import build_gate

    model = start_model(Settings(gate_timeout=Settings.from_env().gate_timeout))
    try:
        gate = build_gate("llm", model.settings, model.client)
        gate.warm()
        times: dict[str, list[float]] = {"message alone": [], "with the conversation": []}
        retrieved = {key: 0 for key in times}
        n_memory = 0
        rows = [q for name in DEV for q in read_questions(ANSWERS / f"{name}_questions.jsonl")]
        for i, q in enumerate(r for r in rows if r.earlier):
            # The earlier turns as the pipeline would pass them (no replies: not generated).
            recent = [Said(user=text, query=text) for text in q.earlier]
            readings = [("message alone", ()), ("with the conversation", recent)]
            for key, context in readings if i % 2 == 0 else readings[::-1]:
                decision = gate.decide(q.question, Conversation(tuple(context), q.question))
                times[key].append(decision.elapsed_ms)
                if q.needs_memory:
                    retrieved[key] += decision.retrieve
            n_memory += q.needs_memory
    finally:
        model.close()
    out: dict[str, Any] = {"model": model.model, "rows": len(times["message alone"])}
    for key, values in times.items():
        ordered = sorted(values)
        out[key] = {
            "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
            "memory_follow_ups_retrieved": round(retrieved[key] / max(n_memory, 1), 3),
        }
    out["ratio_p50"] = round(
        out["with the conversation"]["p50_ms"] / out["message alone"]["p50_ms"], 2
    )
    return out


def command(args: argparse.Namespace) -> int:
    """Print the table."""
    r = run()
    print(f"{r['model']}, {r['rows']} last turns of the follow-up dev sets, same run\n")
    print(
        "\n".join(table_head("llm gate reads", "p50 ms", "p95 ms", "memory follow-ups retrieved"))
    )
    for key in ("message alone", "with the conversation"):
        f = r[key]
        print(table_row(key, f["p50_ms"], f["p95_ms"], f["memory_follow_ups_retrieved"]))
    print(f"\np50 ratio, with / alone: {r['ratio_p50']}x")
    return 0
