"""Answers, measured: what the assistant says, per gate mode, on the configured model.

Each question goes through the app's own turn (the assistant's front, `Assistant.answer`:
gate -> memory search -> streamed reply), once per mode:

    python -m assistant.eval answers --memories M.jsonl --questions Q.jsonl \\
        --modes never,always,local --json --rows rows.jsonl
    python -m assistant.eval answers --locomo           # LoCoMo conv-26, token F1

Memories (`{"id", "text"}` lines) go into a fresh temporary store. Questions are
`{"question", "answers": [...], "needs_memory": bool}` lines (optional `kind`, and
`match`: `contains` or `last_number`), asked alone; or `{"turns": [...], ...}` lines, a
conversation whose earlier turns are played first through the same mode, with history
and without capture, and whose last turn alone is scored (answer_run.py). Modes are the
gate modes plus `always-no-cutoff`: always retrieve the top k with no relevance cut-off,
as mem0 does. The reply model samples greedily (temperature 0) unless `--temperature`
says otherwise (`default`: the endpoint's own sampling, as the app replies); `--repeat N`
runs the set N times for the spread of sampled replies. Each mode asks every question in
turn (`never` first), so that no mode reuses another's prompt cache for the same question.

Inputs: answer_data.py; playing and scoring a question: answer_run.py; scoring rules:
answer_score.py; figures: answer_report.py. With no key and no ANTHROPIC_BASE_URL the
built-in local model is started, as the app does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assistant.config import GateMode, Settings
from assistant.eval.answer_data import (
    DataError,
    Question,
    balanced,
    read_locomo,
    read_memories,
    read_questions,
)
from assistant.eval.answer_report import Row, summarise, table
from assistant.eval.answer_run import run_repeats
from assistant.eval.answer_score import MemoryTerms

NO_CUTOFF_MODE = "always-no-cutoff"
DEFAULT_MODES = "never,always,local"
DEFAULT_LOCOMO = Path("../shared/eval/locomo_memory.json")
DEFAULT_MAX_TOKENS = 256


def parse_modes(text: str) -> list[str]:
    """The comma-separated modes, checked against the gate modes and always-no-cutoff."""
    names = (*GateMode, NO_CUTOFF_MODE)
    modes = [m.strip().lower() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in names]
    if unknown or not modes:
        raise DataError(
            f"unknown mode(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(names)}"
        )
    return list(dict.fromkeys(modes))


def parse_temperature(text: str) -> float | None:
    """A reply temperature: a number from 0, or 'default' (None: the endpoint's sampling)."""
    if text.strip().lower() == "default":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number nor 'default'") from None
    if not value >= 0.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"a temperature is 0 or more, not {text}")
    return value


def shown(temperature: float | None) -> float | str:
    """The temperature as the report writes it: a number, or 'default'."""
    return "default" if temperature is None else temperature


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
    from assistant.runtime.llm import make_client

    settings = settings or Settings.from_env()
    local = None
    if settings.wants_local_model:
        from assistant.eval.local_server import ModelNotReady, start_local

        try:
            running = start_local(settings, say=True)
        except ModelNotReady as exc:
            raise DataError(str(exc)) from None
        settings, local = running.settings, running.local
        model = f"{running.name} (local GGUF)"
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
    temperature: float | None = 0.0,
) -> dict[str, Any]:
    """One front per mode, answering as the app does, sharing the store and one reply model.

    `temperature` 0 is greedy (two runs agree); None leaves sampling to the endpoint's
    default, as the app does.
    """
    from assistant.gates.registry import build_gate
    from assistant.reply.respond import ModelResponder
    from assistant.turn.front import Assistant
    from assistant.turn.pipeline import Pipeline

    responder = ModelResponder(
        model.client, model.settings.chat_model, max_tokens=max_tokens, temperature=temperature
    )
    chats = {}
    for mode in modes:
        gate_mode = GateMode.ALWAYS if mode == NO_CUTOFF_MODE else mode
        gate = build_gate(gate_mode, model.settings, model.client)
        gate.warm()  # load weights before timing: figures are per warm turn, as in the app
        searched = NoCutoffStore(store) if mode == NO_CUTOFF_MODE else store
        pipeline = Pipeline(gate=gate, store=searched, responder=responder, k=k)
        chats[mode] = Assistant.over(pipeline, model.settings, model.client)
    return chats


# ---- running ----------------------------------------------------------------------------


def evaluate(
    memories: Sequence[tuple[str, str]],
    questions: Sequence[Question],
    modes: Sequence[str],
    model: ModelUnderTest,
    *,
    k: int = 5,
    min_similarity: float | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float | None = 0.0,
    repeat: int = 1,
    progress: Callable[[str], None] | None = None,
    on_row: Callable[[Row], None] | None = None,
) -> tuple[dict[str, dict[str, Any]], list[Row]]:
    """Load the memories into a fresh store, run every question in every mode, and score.

    `temperature` None samples replies as the app does (the endpoint's default); `repeat`
    runs the whole set that many times, for the spread of sampled replies.
    """
    from memory.records import Memory
    from memory.store import MemoryStore, release_folder

    with tempfile.TemporaryDirectory(prefix="memgate-answers-") as tmp:
        store = MemoryStore.persistent(tmp, "answers-eval", min_similarity=min_similarity)
        try:
            store.add_records([Memory(i, t, None, "", "imported", {}) for i, t in memories])
            store.warm()
            chats = build_chats(
                modes, model, store, k=k, max_tokens=max_tokens, temperature=temperature
            )
            # One untimed turn first: the model's own first-use costs belong to no mode.
            next(iter(chats.values())).answer("Hello!")
            terms = MemoryTerms.of(text for _, text in memories)
            rows = run_repeats(chats, questions, terms, repeat, progress, on_row)
        finally:
            store.close()
            release_folder(tmp)
    return summarise(rows), rows


# ---- the command line ---------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the answers evaluation's options."""
    parser.add_argument("--memories", type=Path, help="JSONL of {id, text}")
    parser.add_argument(
        "--questions",
        type=Path,
        help="JSONL of {question, answers, needs_memory}, or {turns: [...], answers, "
        "needs_memory}: a conversation whose last turn is scored",
    )
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
    parser.add_argument(
        "--temperature",
        type=parse_temperature,
        default=0.0,
        help="reply sampling: a number (default 0, greedy: two runs agree) or 'default', "
        "the endpoint's own sampling, as the app replies",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run the whole set N times (sampled replies differ): figures pooled, and each "
        "share's mean and spread over the runs",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--rows", type=Path, help="write one JSON line per question (its last turn) and mode"
    )


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
        if args.repeat < 1:
            raise DataError("--repeat must be 1 or more")
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
    talks = sum(bool(q.earlier) for q in questions)
    print(
        f"{len(questions)} questions ({talks} conversations) x {len(modes)} modes"
        + (f" x {args.repeat} runs" if args.repeat > 1 else "")
        + f" on {model.model}, {len(memories)} memories, temperature {shown(args.temperature)}",
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
            temperature=args.temperature,
            repeat=args.repeat,
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
        "temperature": shown(args.temperature),
        "repeat": args.repeat,
        "k": args.k,
        "modes": summary,
    }
    print(json.dumps(result) if args.json else table(result))
    return 0
