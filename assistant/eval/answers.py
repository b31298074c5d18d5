"""Answers, measured: what the assistant says, per gate mode, on the configured model.

Each question goes through the app's own turn (Chat.answer: gate -> memory search ->
streamed reply), alone, with no history, once per mode:

    python -m assistant.eval answers --memories M.jsonl --questions Q.jsonl \\
        --modes never,always,local --json --rows rows.jsonl
    python -m assistant.eval answers --locomo           # LoCoMo conv-26, token F1

Memories (`{"id", "text"}` lines) go into a fresh temporary store. Questions are
`{"question", "answers": [...], "needs_memory": bool}` lines (optional `kind`, and
`match`: `contains` or `last_number`). Modes are the gate modes plus `always-no-cutoff`:
always retrieve the top k with no relevance cut-off, as mem0 does. The reply model samples
greedily (temperature 0), so two runs agree. Each mode asks every question in turn
(`never` first), so that no mode reuses another's prompt cache for the same question.

Inputs: answer_data.py; scoring rules: answer_score.py; figures: answer_report.py. With
no key and no ANTHROPIC_BASE_URL the built-in local model is started, as the app does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assistant.config import Settings
from assistant.eval.answer_data import (
    DataError,
    Question,
    balanced,
    read_locomo,
    read_memories,
    read_questions,
)
from assistant.eval.answer_report import Row, summarise, table
from assistant.eval.answer_score import (
    MemoryTerms,
    boilerplate,
    damage,
    is_correct,
    locomo_f1,
    speaks_as_user,
)

NO_CUTOFF_MODE = "always-no-cutoff"
DEFAULT_MODES = "never,always,local"
DEFAULT_LOCOMO = Path("../shared/eval/locomo_memory.json")
DEFAULT_MAX_TOKENS = 256


def parse_modes(text: str) -> list[str]:
    """The comma-separated modes, checked against the gate modes and always-no-cutoff."""
    from assistant.gate_modes import NAMES

    modes = [m.strip().lower() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in (*NAMES, NO_CUTOFF_MODE)]
    if unknown or not modes:
        raise DataError(
            f"unknown mode(s) {', '.join(unknown) or '(none)'}; "
            f"choose from {', '.join((*NAMES, NO_CUTOFF_MODE))}"
        )
    return list(dict.fromkeys(modes))


# ---- the model and the pipelines ------------------------------------------------------------


class NoCutoffStore:
    """A store whose search returns the top k whatever their relevance (mem0's behaviour)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def search(self, query: str, k: int = 5, min_similarity: float | None = None) -> list[Any]:
        """The top k memories, no relevance cut-off."""
        return self._store.search(query, k=k, min_similarity=-1.0)


@dataclass
class ModelUnderTest:
    """The reply model an evaluation talks to, and the local server it started, if any."""

    settings: Any
    client: Any
    model: str
    endpoint: str
    local: Any = None

    def close(self) -> None:
        """Stop a local model server this evaluation started."""
        if self.local is not None:
            self.local.stop()


def start_model(settings: Settings | None = None) -> ModelUnderTest:
    """The configured model; with no key or base URL, the built-in local model, started."""
    from assistant.llm import make_client

    settings = settings or Settings.from_env()
    local = None
    if settings.wants_local_model:
        from assistant.factory import start_local_model

        print("starting the local model (llama.cpp on 127.0.0.1)…", file=sys.stderr)
        settings, local = start_local_model(settings)
        status = local.wait_ready()
        if not status.ready:
            local.stop()
            raise DataError(f"the local model did not start: {status.error}")
        model = f"{status.name} (local GGUF)"
    elif not settings.model_configured:
        raise DataError(
            "answers need a model: set ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL, or unset "
            "MEMGATE_LOCAL_MODEL (it is 'off') to use the built-in local model"
        )
    else:
        model = settings.chat_model
    return ModelUnderTest(settings, make_client(settings), model, settings.endpoint_host, local)


def build_chats(
    modes: Sequence[str],
    model: ModelUnderTest,
    store: Any,
    *,
    k: int,
    max_tokens: int,
    temperature: float = 0.0,
) -> dict[str, Any]:
    """One chat per mode, as the app answers, sharing the store and a greedy reply model."""
    from assistant.chat import Chat
    from assistant.gate_modes import build_gate
    from assistant.pipeline import Pipeline
    from assistant.respond import ModelResponder

    responder = ModelResponder(
        model.client, model.settings.chat_model, max_tokens=max_tokens, temperature=temperature
    )
    chats = {}
    for mode in modes:
        gate_mode = "always" if mode == NO_CUTOFF_MODE else mode
        gate = build_gate(gate_mode, model.settings, model.client)
        gate.warm()  # load weights before timing: figures are per warm turn, as in the app
        searched = NoCutoffStore(store) if mode == NO_CUTOFF_MODE else store
        chats[mode] = Chat.fixed(Pipeline(gate=gate, store=searched, responder=responder, k=k))
    return chats


# ---- running and scoring ------------------------------------------------------------------


def _row(question: Question, mode: str, turn: Any) -> Row:
    memories = [m.text for m in turn.memories]
    f1 = None
    if question.category is not None:
        f1 = round(locomo_f1(turn.reply, question.answers[0], question.category), 4)
    return Row(
        question=question.question,
        mode=mode,
        needs_memory=question.needs_memory,
        kind=question.kind,
        retrieved=turn.decision.retrieve,
        failed_open=turn.decision.failed_open,
        gate_reason=turn.decision.reason,
        memories=memories,
        reply=turn.reply,
        correct=is_correct(turn.reply, question.answers, question.match),
        leaked=None,
        boilerplate=list(boilerplate(turn.reply)),
        speaks_as_user=speaks_as_user(turn.reply, question.question),
        first_token_ms=None
        if turn.timings.first_token_ms is None
        else round(turn.timings.first_token_ms, 1),
        memory_tokens=turn.usage.memory_tokens,
        reply_error=turn.reply_error,
        f1=f1,
    )


def run_questions(
    chats: dict[str, Any],
    questions: Sequence[Question],
    terms: MemoryTerms,
    progress: Callable[[str], None] | None = None,
    on_row: Callable[[Row], None] | None = None,
) -> list[Row]:
    """Every question through each mode's chat in turn, `never` first; scored.

    Modes run one after another, not interleaved on each question: two modes that send
    the same memories for a question back to back would let the second reuse the first's
    prompt cache in llama.cpp (a tenth of the first-token time here), and the figures
    would measure the order. Run whole, each mode meets the cache as the app does: the
    system prompt warm, each message's memories fresh. `never` goes first because its
    replies are the world knowledge the damage rule subtracts.
    """
    from assistant.chat import TurnOptions

    modes = sorted(chats, key=lambda m: m != "never")
    alone = TurnOptions(capture=False)  # each question on its own: no history, no capture
    rows: list[Row] = []
    world: dict[int, str] = {}
    started = time.perf_counter()
    total = len(modes) * len(questions)
    for m, mode in enumerate(modes):
        for i, question in enumerate(questions):
            turn = chats[mode].answer(question.question, options=alone).gated
            row = _row(question, mode, turn)
            if mode == "never":
                world[i] = row.reply
            if not question.needs_memory:
                hurt = damage(row.reply, question.question, question.answers, terms, world.get(i))
                row.leaked = hurt.damaged
                row.leak_terms = [*hurt.terms, *hurt.phrases, *hurt.about_you]
            rows.append(row)
            if on_row is not None:
                on_row(row)
            if progress is not None:
                done = m * len(questions) + i + 1
                secs = time.perf_counter() - started
                mark = f"{'R' if row.retrieved else '-'}{'✓' if row.correct else '✗'}"
                mark += "!" if row.leaked else ""
                progress(
                    f"[{done}/{total}] {mode} {mark} {question.question[:40]!r} · {secs:.0f} s, "
                    f"~{secs / done * (total - done):.0f} s left"
                )
    return rows


def evaluate(
    memories: Sequence[tuple[str, str]],
    questions: Sequence[Question],
    modes: Sequence[str],
    model: ModelUnderTest,
    *,
    k: int = 5,
    min_similarity: float | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    progress: Callable[[str], None] | None = None,
    on_row: Callable[[Row], None] | None = None,
) -> tuple[dict[str, dict[str, Any]], list[Row]]:
    """Load the memories into a fresh store, run every question in every mode, and score."""
    from memory.records import Memory
    from memory.store import MemoryStore, release_folder

    with tempfile.TemporaryDirectory(prefix="memgate-answers-") as tmp:
        store = MemoryStore.persistent(tmp, "answers-eval", min_similarity=min_similarity)
        try:
            store.add_records([Memory(i, t, None, "", "imported", {}) for i, t in memories])
            store.warm()
            chats = build_chats(modes, model, store, k=k, max_tokens=max_tokens)
            # One untimed turn first: the model's own first-use costs belong to no mode.
            next(iter(chats.values())).answer("Hello!")
            terms = MemoryTerms.of(text for _, text in memories)
            rows = run_questions(chats, questions, terms, progress, on_row)
        finally:
            store.close()
            release_folder(tmp)
    return summarise(rows), rows


# ---- the command line ---------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the answers evaluation's options."""
    parser.add_argument("--memories", type=Path, help="JSONL of {id, text}")
    parser.add_argument("--questions", type=Path, help="JSONL of {question, answers, needs_memory}")
    parser.add_argument(
        "--locomo",
        type=Path,
        nargs="?",
        const=DEFAULT_LOCOMO,
        help=f"LoCoMo instead: its turns as memories, its QA scored by token F1 "
        f"(default path {DEFAULT_LOCOMO})",
    )
    parser.add_argument(
        "--limit",
        type=int,
        help="ask only N questions (half of each kind; LoCoMo: its categories in turn)",
    )
    parser.add_argument(
        "--modes",
        default=DEFAULT_MODES,
        help=f"comma-separated: gate modes and {NO_CUTOFF_MODE} (default {DEFAULT_MODES})",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help=f"reply length limit, to bound run time (default {DEFAULT_MAX_TOKENS})",
    )
    parser.add_argument("--k", type=int, default=5, help="memories per search (default 5)")
    parser.add_argument(
        "--min-similarity",
        type=float,
        help="relevance cut-off (default: MEMGATE_MIN_SIMILARITY or the store's)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rows", type=Path, help="write one JSON line per question and mode")


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; 2 on bad input or no model."""
    try:
        modes = parse_modes(args.modes)
        if args.locomo:
            memories, questions = read_locomo(args.locomo, args.limit)
        elif args.memories and args.questions:
            memories, questions = read_memories(args.memories), read_questions(args.questions)
            questions = balanced(questions, args.limit)
        else:
            raise DataError("give --memories and --questions, or --locomo")
        if not questions:
            raise DataError("no questions to ask")
        # Rows are written as they come: a long run stopped halfway keeps what it measured.
        rows_file = open(args.rows, "w", encoding="utf-8") if args.rows else None  # noqa: SIM115
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        model = start_model()
    except (DataError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        if rows_file is not None:
            rows_file.close()
        return 2
    print(
        f"{len(questions)} questions x {len(modes)} modes on {model.model}, "
        f"{len(memories)} memories",
        file=sys.stderr,
    )

    def write_row(row: Row) -> None:
        if rows_file is not None:
            rows_file.write(json.dumps(asdict(row), ensure_ascii=False) + "\n")
            rows_file.flush()

    try:
        summary, _rows = evaluate(
            memories,
            questions,
            modes,
            model,
            k=args.k,
            min_similarity=args.min_similarity
            if args.min_similarity is not None
            else model.settings.min_similarity,
            max_tokens=args.max_tokens,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            on_row=write_row,
        )
    finally:
        model.close()
        if rows_file is not None:
            rows_file.close()
    result = {
        "model": model.model,
        "endpoint": model.endpoint,
        "set": str(args.locomo) if args.locomo else f"{args.memories} + {args.questions}",
        "max_tokens": args.max_tokens,
        "temperature": 0.0,
        "k": args.k,
        "modes": summary,
    }
    print(json.dumps(result) if args.json else table(result))
    return 0
