"""How far reading, not retrieval, holds follow-ups back: the model sent only the right notes.

For each memory follow-up of a set, the earlier turns are played through `local` as `eval
answers` plays them (greedy). The last turn is then answered twice with the same history
and the same standalone reading (`meant`):
- `local`: the memories the app's own pipeline sent;
- `gold`: only the notes that hold a gold answer string, as a perfect search would send.

`gold` is the share a better gate or search could reach on that set with this reply model:
what it misses, the model misread. A shared row answered right by `local` and wrong by
`gold` is noise of the reply model, not of retrieval.

    python -m bench followup-ceiling --sets followup_dancer_test,followup_driver_test
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.figures import table_head, table_row
from bench.followup_retrieval import ANSWERS, memories_file


def gold_notes(memories: list[tuple[str, str]], answers: tuple[str, ...]) -> list[tuple[str, str]]:
    """The notes that hold one of the gold answer strings (as the scorer reads them)."""
    from assistant.eval.answer_match import contains

    return [(i, t) for i, t in memories if any(contains(t, a) for a in answers)]


def measure(name: str, model: Any, tmp: Path, rows: list[dict[str, Any]]) -> dict[str, int]:
    """One set: memory follow-ups right with the pipeline's memories and with the gold notes."""
    from assistant.eval.answer_data import read_memories, read_questions
    from assistant.eval.answer_match import is_correct
    from assistant.eval.answers import build_chats
    from assistant.reply.respond import ModelResponder
    from assistant.turn.chat import TurnOptions
    from assistant.turn.pipeline import lookup_of
    from memory.records import Memory
    from memory.store import MemoryStore, release_folder

    memories = read_memories(memories_file(name))
    questions = [
        q
        for q in read_questions(ANSWERS / f"{name}_questions.jsonl")
        if q.needs_memory and q.earlier
    ]
    folder = tmp / name
    store = MemoryStore.persistent(folder, "ceiling")
    counts = {"rows": 0, "local": 0, "gold": 0, "no_gold_note": 0}
    try:
        store.add_records([Memory(i, t, None, "", "imported", {}) for i, t in memories])
        store.warm()
        front = build_chats(["local"], model, store, k=5, max_tokens=64)["local"]
        responder = ModelResponder(
            model.client, model.settings.chat_model, max_tokens=64, temperature=0.0
        )
        front.answer("Hello!")  # the model's first-use costs belong to no row
        options = TurnOptions(capture=False)
        for q in questions:
            history = []
            for message in q.earlier:
                history.append(front.answer(message, history, options))
            local = front.answer(q.question, history, options).gated
            gold = [
                Memory(i, t, None, "", "imported", {}) for i, t in gold_notes(memories, q.answers)
            ]
            past = [e.gated.history_item() for e in history if e.gated.reply_usable]
            read = responder.reply(
                q.question, gold, past, lookup=lookup_of(True, None), meant=local.meant
            )
            right = {
                "local": is_correct(local.reply, q.answers),
                "gold": is_correct(read.text, q.answers),
            }
            counts["rows"] += 1
            counts["local"] += right["local"]
            counts["gold"] += right["gold"]
            counts["no_gold_note"] += not gold
            rows.append(
                {
                    "set": name,
                    "turns": list(q.turns),
                    "kind": q.kind,
                    "answers": list(q.answers),
                    "local": {"reply": local.reply, "memories": [m.text for m in local.memories]},
                    "gold": {"reply": read.text, "memories": [m.text for m in gold]},
                    "right": right,
                }
            )
            print(f"  {name} {'✓' if right['local'] else '✗'}{'✓' if right['gold'] else '✗'} "
                  f"{' → '.join(q.turns)[-70:]!r}", flush=True)  # fmt: skip
    finally:
        store.close()
        release_folder(folder)
    return counts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The sets to read, and where to write every row."""
    parser.add_argument("--sets", required=True, help="comma-separated follow-up set names")
    parser.add_argument("--rows", type=Path, help="write every row here (JSON lines)")


def command(args: argparse.Namespace) -> int:
    """Print, per set and in all, memory follow-ups right with local's memories and with gold."""
    from assistant.eval.answers import start_model

    model = start_model()
    rows: list[dict[str, Any]] = []
    total = {"rows": 0, "local": 0, "gold": 0, "no_gold_note": 0}
    head = ("set", "memory follow-ups", "local right", "gold notes right", "no gold note")
    print("\n".join(table_head(*head)))
    try:
        with tempfile.TemporaryDirectory(prefix="memgate-ceiling-") as tmp:
            for name in args.sets.split(","):
                got = measure(name.strip(), model, Path(tmp), rows)
                total = {k: total[k] + got[k] for k in total}
                cells = [got[k] for k in ("rows", "local", "gold", "no_gold_note")]
                print(table_row(name, *cells))
    finally:
        model.close()
    n = max(total["rows"], 1)
    shares = (f"{total[k]} ({total[k] / n:.2f})" for k in ("local", "gold"))
    print(table_row("all", total["rows"], *shares, total["no_gold_note"]))
    if args.rows:
        args.rows.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return 0
