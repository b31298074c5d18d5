"""Follow-ups on the retrieval side, without a reply model: what the last turn is given.

Each conversation of the follow-up sets (evaluation/answers/followup_*) is played through
the app's own turn (`Chat.answer`, the local gate, the real store) with the offline
responder standing in for the reply model. Only the last turn is scored. Readings:

- `alone`: the conversation off, every message read alone (the gate and the search);
- `joined`: every message after a turn read as a follow-up, joined after the exchange it
  continues and fused with its other readings (no detection: no rule at all);
- `mechanism`: the app's own (assistant/conversation): the same, for a message that leans;
- `without PIECE` (`--without`): the mechanism with one piece taken out (`without`);
- `rewrite` (`--rewrite`, needs the built-in model): a last turn that follows a turn is
  rewritten by the model into a standalone question (LangChain's history-aware prompt,
  one short call), then decided and searched alone as that question, top 3.

Per reading: memory follow-ups whose memories sent hold a gold answer (a reply can be
right only then), memories sent per memory follow-up, general follow-ups searched and
memories sent with them, the decision's p50 and p95 ms. Totals are pooled over the sets,
and split by the sets' language (evaluation/answers/followup_languages.tsv).

    python -m bench followup-retrieval [--sets held-out|unscored|NAME,...]
        [--readings alone,joined,mechanism] [--without detection,world,fusion]
        [--rewrite] [--json PATH]
    python -m bench followup-retrieval --sets single   # the single-question answer sets
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.figures import table_row

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = ROOT / "evaluation" / "answers"
LANGUAGES = ANSWERS / "followup_languages.tsv"
DEV_SETS = ("followup_nurse_dev", "followup_founder_dev", "followup_pilot_dev")
_PERSONA = {"followup_nurse_dev": "nurse_dev", "followup_founder_dev": "founder_dev"}
# Written after the mechanism of issue 57, for its end-to-end scoring: out of the ablation.
UNSCORED = (
    "followup_glassblower_test",
    "followup_ropemaker_test",
    "followup_dispatcher_test",
    "followup_innkeeper_test",
    "followup_controller_test",
    "followup_cardiologist_test",
    "followup_streetcook_test",
    "followup_photographer_test",
    "followup_craneop_test",
    "followup_stenographer_test",
    "followup_batikmaker_test",
    "followup_confectioner_test",
    "followup_teamlead_test",
    "followup_phoowner_test",
    "followup_labtech_test",
    "followup_textileshop_test",
    # The fourth batch, written before a search by the best note's names was tried (and
    # dropped: docs/followups.md).
    "followup_harpist_test",
    "followup_farrier_test",
    "followup_tiler_test",
    "followup_cobbler_test",
    "followup_weaver_test",
    "followup_pharmacyaide_test",
)
READINGS = ("alone", "joined", "mechanism")
SINGLE = ("nurse_dev", "founder_dev", "teacher_test")
REWRITE_SENT = 3
# LangChain's history-aware retriever prompt (contextualize_q_system_prompt), as memU asks.
REWRITE_PROMPT = (
    "Given a chat history and the latest user question which might reference context in "
    "the chat history, formulate a standalone question which can be understood without "
    "the chat history. Do NOT answer the question, just reformulate it if needed and "
    "otherwise return it as is."
)


def held_out() -> tuple[str, ...]:
    """The blind follow-up sets scored once before issue 57: the ablation's sets."""
    names = sorted(
        p.name.removesuffix("_questions.jsonl")
        for p in ANSWERS.glob("followup_*_test_questions.jsonl")
    )
    return tuple(n for n in names if n not in UNSCORED)


def languages() -> dict[str, str]:
    """Each set's language: "english", or "mixed" when its turns switch to another."""
    rows = LANGUAGES.read_text(encoding="utf-8").splitlines()[1:]
    return {r.split("\t")[0]: r.split("\t")[1] for r in rows if r.strip()}


def memories_file(name: str) -> Path:
    """The memories a follow-up set is asked over."""
    own = ANSWERS / f"{name}_memories.jsonl"
    persona = _PERSONA.get(name, name.removeprefix("followup_"))
    return own if own.exists() else ANSWERS / f"{persona}_memories.jsonl"


@contextlib.contextmanager
def _replaced(module: Any, name: str, value: Any) -> Iterator[None]:
    """`module.name` is `value` for the block: one piece of the mechanism taken out."""
    kept = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, kept)


def _query_only(store: Any, query: str, reading: Any, k: int) -> tuple:
    from assistant.conversation.search import FOLLOW_UP_SENT

    found = tuple(store.search(query, k=k))
    return found[: min(k, FOLLOW_UP_SENT)] if reading.follow_up else found


def without(pieces: str) -> contextlib.AbstractContextManager[None]:
    """The mechanism with pieces taken out ("world", "detection+world"), for the ablation."""
    stack = contextlib.ExitStack()
    for piece in pieces.split("+"):
        stack.enter_context(_without(piece))
    return stack


def _without(piece: str) -> contextlib.AbstractContextManager[None]:
    """The mechanism with one piece taken out."""
    import assistant.conversation.reading as reading
    import assistant.gates.followup as decision
    import assistant.turn.pipeline as pipeline

    pieces = {
        # Every message after a turn is a follow-up: reading `joined`.
        "detection": lambda: _replaced(reading, "leans", lambda message: True),
        # A follow-up of a memory exchange that asks the world about it searches too.
        "world": lambda: _replaced(decision, "asks_the_world", lambda d, m: False),
        # A follow-up is searched as its query alone, no other reading fused.
        "fusion": lambda: _replaced(pipeline, "searched", _query_only),
    }
    return pieces[piece]()


class Rewriter:
    """One short call to the built-in model per follow-up: its standalone question."""

    def __init__(self, client: Any, model: str) -> None:
        self.client, self.model, self.ms = client, model, []

    def __call__(self, history: list[Any], message: str) -> str:
        from assistant.runtime.llm import text_of

        lines = [f"User: {t.gated.message}\nAssistant: {t.gated.reply}" for t in history[-3:]]
        prompt = f"Chat history:\n{chr(10).join(lines)}\n\nLatest user question: {message}"
        started = time.perf_counter()
        response = self.client.messages.create(
            model=self.model,
            max_tokens=48,
            extra_body={"temperature": 0},  # greedy; the 2.x SDK takes it in the body
            system=REWRITE_PROMPT,
            messages=[{"role": "user", "content": prompt + "\n\nStandalone question:"}],
        )
        self.ms.append((time.perf_counter() - started) * 1000.0)
        text = text_of(response).strip().strip('"').splitlines()
        return text[0].strip() if text and text[0].strip() else message


def measure(name: str, tmp: Path, readings: tuple[str, ...], rewriter: Rewriter | None) -> dict:
    """One set's counts per reading."""
    from assistant.eval.answer_data import read_memories, read_questions
    from assistant.eval.answer_match import contains
    from assistant.gates.local import LocalGate
    from assistant.reply.offline import OfflineResponder
    from assistant.turn.chat import Chat, TurnOptions
    from assistant.turn.pipeline import Pipeline
    from memory.records import Memory
    from memory.store import MemoryStore

    store = MemoryStore.persistent(tmp / name, "bench")
    store.add_records(
        [Memory(i, t, None, "", "imported", {}) for i, t in read_memories(memories_file(name))]
    )
    asked = read_questions(ANSWERS / f"{name}_questions.jsonl")
    # A single-question set is asked one question at a time: no conversation to read.
    questions = [q for q in asked if q.earlier] or asked
    gate = LocalGate()
    gate.warm()
    options = TurnOptions(capture=False)

    def pipeline(**parts: Any) -> Pipeline:
        return Pipeline(gate=gate, store=store, responder=OfflineResponder(), **parts)

    out: dict[str, Any] = {}
    plays = [*readings, *(["rewrite"] if rewriter else [])]
    for reading in plays:
        chat = Chat.fixed(pipeline(conversation=reading != "alone"))
        if reading == "rewrite":
            chat = Chat.fixed(pipeline())
        alone = Chat.fixed(pipeline(conversation=False, k=REWRITE_SENT))
        c = {"mem": 0, "given": 0, "first": 0, "top2": 0, "sent_mem": 0}
        c |= {"gen": 0, "searched_gen": 0, "sent_gen": 0}
        gate_ms: list[float] = []
        if reading == "joined":
            patch = without("detection")
        elif reading.startswith("without "):
            patch = without(reading.removeprefix("without "))
        else:
            patch = contextlib.nullcontext()
        with patch:
            for q in questions:
                history: list[Any] = []
                for text in q.earlier:
                    history.append(chat.answer(text, history, options))
                gate.encoder().clear_cache()  # time the model, not the cache of another pass
                if reading == "rewrite" and rewriter is not None:
                    last = alone.answer(rewriter(history, q.question), [], options).gated
                else:
                    last = chat.answer(q.question, history, options).gated
                gate_ms.append(last.timings.gate_ms)
                if q.needs_memory:
                    c["mem"] += 1
                    c["sent_mem"] += len(last.memories)
                    answering = [any(contains(m.text, a) for a in q.answers) for m in last.memories]
                    c["given"] += any(answering)
                    # Where the answering note stands: what sending fewer notes would keep.
                    c["first"] += any(answering[:1])
                    c["top2"] += any(answering[:2])
                else:
                    c["gen"] += 1
                    c["searched_gen"] += last.searched
                    c["sent_gen"] += len(last.memories)
        c["gate_ms"] = gate_ms
        out[reading] = c
    store.close()
    return out


def totals(results: dict[str, dict], sets: list[str]) -> dict[str, dict[str, Any]]:
    """Counts pooled over `sets`, per reading, with the shares they make."""
    out: dict[str, dict[str, Any]] = {}
    for reading in next(iter(results.values())):
        counted = ("mem", "given", "first", "top2", "sent_mem")
        s = {k: sum(results[n][reading].get(k, 0) for n in sets) for k in counted}
        s |= {
            k: sum(results[n][reading][k] for n in sets)
            for k in ("gen", "searched_gen", "sent_gen")
        }
        ms = sorted(m for n in sets for m in results[n][reading]["gate_ms"])
        s["answer_given"] = round(s["given"] / max(s["mem"], 1), 3)
        s["answer_first"] = round(s["first"] / max(s["mem"], 1), 3)
        s["answer_top2"] = round(s["top2"] / max(s["mem"], 1), 3)
        s["sent_per_memory"] = round(s["sent_mem"] / max(s["mem"], 1), 2)
        s["general_searched"] = round(s["searched_gen"] / max(s["gen"], 1), 3)
        s["sent_per_general"] = round(s["sent_gen"] / max(s["gen"], 1), 2)
        s["gate_p50_ms"] = round(statistics.median(ms), 1) if ms else 0.0
        s["gate_p95_ms"] = round(ms[int(0.95 * (len(ms) - 1))], 1) if ms else 0.0
        out[reading] = s
    return out


def run(
    sets: tuple[str, ...] = DEV_SETS, readings: tuple[str, ...] = READINGS, rewrite: bool = False
) -> dict:
    """Every set's counts, and the totals by language."""
    results: dict[str, dict] = {}
    with contextlib.ExitStack() as stack:
        rewriter = None
        if rewrite:
            from assistant.eval.local_server import start_local
            from assistant.runtime.llm import make_client

            model = stack.enter_context(start_local(say=True))
            rewriter = Rewriter(make_client(model.settings), model.settings.chat_model)
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for name in sets:
            results[name] = measure(name, tmp, readings, rewriter)
        lang = languages()
        groups = {"all": list(sets)}
        for kind in ("english", "mixed"):
            groups[kind] = [n for n in sets if lang.get(n) == kind]
        report = {g: totals(results, names) for g, names in groups.items() if names}
        if rewriter is not None and rewriter.ms:
            ms = sorted(rewriter.ms)
            report["rewrite_ms"] = {
                "p50": round(statistics.median(ms)),
                "p95": round(ms[int(0.95 * (len(ms) - 1))]),
                "calls": len(ms),
            }
    return {"sets": results, "totals": report, "groups": {g: len(n) for g, n in groups.items()}}


def markdown(results: dict) -> str:
    """One table: each reading's figures, over all sets, English-only and language-mixed."""
    lines = [
        "| sets | reading | memory follow-ups | answer given | answer first | answer in top 2 "
        "| memories per memory follow-up "
        "| general searched | memories per general | decision p50 / p95 ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for group, n in results["groups"].items():
        for reading, t in results["totals"].get(group, {}).items():
            lines.append(
                table_row(
                    f"{group} ({n})",
                    reading,
                    t["mem"],
                    f"{t['answer_given']:.3f} ({t['given']})",
                    f"{t['answer_first']:.3f} ({t['first']})",
                    f"{t['answer_top2']:.3f} ({t['top2']})",
                    f"{t['sent_per_memory']:.2f}",
                    f"{t['general_searched']:.3f} ({t['searched_gen']}/{t['gen']})",
                    f"{t['sent_per_general']:.2f}",
                    f"{t['gate_p50_ms']} / {t['gate_p95_ms']}",
                )
            )
    if "rewrite_ms" in results["totals"]:
        r = results["totals"]["rewrite_ms"]
        lines += [
            "",
            f"Model rewrite: p50 {r['p50']} ms, p95 {r['p95']} ms over {r['calls']} calls.",
        ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench followup-retrieval --help`)."""
    parser.add_argument("--sets", default="held-out", help="held-out, unscored, single, or names")
    parser.add_argument("--readings", default=",".join(READINGS))
    parser.add_argument("--rewrite", action="store_true", help="add the model rewrite")
    parser.add_argument(
        "--without",
        default="",
        help="also play the mechanism without each of: detection, world, fusion (or a+b)",
    )
    parser.add_argument("--json", type=Path, help="also write every count here")


def command(args: argparse.Namespace) -> int:
    """Print the table (and write the counts with --json)."""
    chosen = {"held-out": held_out(), "unscored": UNSCORED, "single": SINGLE}.get(args.sets)
    sets = chosen or tuple(args.sets.split(","))
    readings = tuple(r for r in args.readings.split(",") if r)
    readings += tuple(f"without {p}" for p in args.without.split(",") if p)
    results = run(sets, readings, args.rewrite)
    if args.json:
        args.json.write_text(json.dumps(results), encoding="utf-8")
    print(markdown(results))
    return 0
