"""Answers, measured: what the assistant says, per gate mode, on the configured model.

Each question goes through the app's own turn (Pipeline.respond: gate -> memory search
-> streamed reply), alone, with no history, once per mode:

    python -m assistant.eval answers --memories M.jsonl --questions Q.jsonl \\
        --modes never,always,local --json --rows rows.jsonl
    python -m assistant.eval answers --locomo           # LoCoMo conv-26, token F1

Memories (`{"id", "text"}` lines) go into a fresh temporary store. Questions are
`{"question", "answers": [...], "needs_memory": bool}` lines (optional `kind`, and
`match`: `contains` or `last_number`). Modes are the gate modes plus `always-no-cutoff`:
always retrieve the top k with no relevance cut-off, as mem0 does. The reply model samples
greedily (temperature 0), so two runs agree. Each mode asks every question in turn
(`never` first), so that no mode reuses another's prompt cache for the same question.

Scoring rules: assistant/eval/answer_score.py. With no key and no ANTHROPIC_BASE_URL the
built-in local model is started, as the app does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assistant.eval.answer_score import (
    MemoryTerms,
    boilerplate,
    damage,
    is_correct,
    locomo_f1,
    speaks_as_user,
)
from assistant.eval.stats import percentile
from memory.jsonl import JsonlError, read_jsonl

NO_CUTOFF_MODE = "always-no-cutoff"
DEFAULT_MODES = "never,always,local"
DEFAULT_LOCOMO = Path("../shared/eval/locomo_memory.json")
DEFAULT_MAX_TOKENS = 256
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class DataError(ValueError):
    """An input file cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Question:
    """One question with its gold answers."""

    question: str
    answers: tuple[str, ...]
    needs_memory: bool
    kind: str = ""
    match: str = "contains"
    category: int | None = None  # LoCoMo's QA category (then scored by token F1)


@dataclass
class Row:
    """One question answered in one mode, scored."""

    question: str
    mode: str
    needs_memory: bool
    kind: str
    retrieved: bool
    failed_open: bool
    gate_reason: str
    memories: list[str]
    reply: str
    correct: bool
    leaked: bool | None  # questions that need memory: None (a memory is what they want)
    leak_terms: list[str] = field(default_factory=list)
    boilerplate: list[str] = field(default_factory=list)
    speaks_as_user: bool = False  # "My brother lives in Cork": the reply took the user's place
    first_token_ms: float | None = None
    memory_tokens: int = 0
    reply_error: str | None = None
    f1: float | None = None  # LoCoMo questions only


# ---- inputs -------------------------------------------------------------------------------


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        return list(read_jsonl(path))
    except JsonlError as exc:
        raise DataError(str(exc)) from None


def read_memories(path: Path) -> list[tuple[str, str]]:
    """(id, text) pairs from `{"id", "text"}` lines."""
    out = []
    for number, row in _lines(path):
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{path}, line {number}: 'text' must be a non-empty string")
        out.append((str(row.get("id", f"m{number}")), text))
    if len({mid for mid, _ in out}) != len(out):
        raise DataError(f"{path}: memory ids must be unique")
    return out


def read_questions(path: Path) -> list[Question]:
    """Questions from `{"question", "answers", "needs_memory"}` lines."""
    out = []
    for number, row in _lines(path):
        question, answers, needs = row.get("question"), row.get("answers"), row.get("needs_memory")
        if not isinstance(question, str) or not question.strip():
            raise DataError(f"{path}, line {number}: 'question' must be a non-empty string")
        if not isinstance(answers, list) or not answers:
            raise DataError(f"{path}, line {number}: 'answers' must be a non-empty list")
        if not isinstance(needs, bool):
            raise DataError(f"{path}, line {number}: 'needs_memory' must be true or false")
        match = row.get("match", "contains")
        if match not in ("contains", "last_number"):
            raise DataError(f"{path}, line {number}: 'match' must be contains or last_number")
        kind = str(row.get("kind") or ("memory" if needs else "general"))
        out.append(Question(question, tuple(str(a) for a in answers), needs, kind, match))
    return out


def read_locomo(
    path: Path, limit: int | None = None
) -> tuple[list[tuple[str, str]], list[Question]]:
    """LoCoMo's turns as memories (speaker and date kept) and its answerable QA (1-4)."""
    from assistant.eval.recall import locomo_memory_text

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conv = (data.get("conversations") or [data["conversation"]])[0]
    memories = [
        (t["dia_id"], locomo_memory_text(t, s["date_time"], "speaker+date"))
        for s in conv["sessions"]
        for t in s["turns"]
    ]
    # Category 5 is adversarial (no answer exists): the mem0 paper leaves it out too.
    questions = [
        Question(
            qa["question"],
            (str(qa["answer"]),),
            True,
            LOCOMO_CATEGORIES[int(qa["category"])],
            category=int(qa["category"]),
        )
        for qa in conv["qa"]
        if int(qa.get("category", 5)) in LOCOMO_CATEGORIES and "answer" in qa
    ]
    if limit and limit < len(questions):
        # Round-robin over the categories, in file order: a short run keeps their mix.
        queues = {c: [q for q in questions if q.category == c] for c in LOCOMO_CATEGORIES}
        picked: list[Question] = []
        while len(picked) < limit:
            for queue in queues.values():
                if queue and len(picked) < limit:
                    picked.append(queue.pop(0))
        questions = picked
    return memories, questions


def balanced(questions: Sequence[Question], limit: int | None) -> list[Question]:
    """The first `limit` questions, half needing memory and half not when both kinds exist."""
    if not limit or limit >= len(questions):
        return list(questions)
    memory = [q for q in questions if q.needs_memory]
    general = [q for q in questions if not q.needs_memory]
    if not memory or not general:
        return list(questions[:limit])
    # A set lists its memory questions first: a plain cut would keep only those.
    first = min(limit // 2, len(memory))
    rest = min(limit - first, len(general))
    return memory[: limit - rest] + general[:rest]


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


def start_model(env: dict[str, str] | None = None) -> ModelUnderTest:
    """The configured model; with no key or base URL, the built-in local model, started."""
    from assistant.config import Settings
    from assistant.llm import make_client

    settings = Settings.from_env(env)
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


def _share(hits: int, n: int) -> float | None:
    return round(hits / n, 4) if n else None


def _p50(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(percentile(present, 0.5), 1) if present else None


def summarise(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """The figures per mode, in the order the modes first appear."""
    out: dict[str, dict[str, Any]] = {}
    for mode in dict.fromkeys(r.mode for r in rows):
        mine = [r for r in rows if r.mode == mode]
        mem = [r for r in mine if r.needs_memory]
        gen = [r for r in mine if not r.needs_memory]
        figures: dict[str, Any] = {
            "memory_accuracy": _share(sum(r.correct for r in mem), len(mem)),
            "general_accuracy": _share(sum(r.correct for r in gen), len(gen)),
            "leak_rate": _share(sum(bool(r.leaked) for r in gen), len(gen)),
            "boilerplate_rate": _share(sum(bool(r.boilerplate) for r in mine), len(mine)),
            "speaks_as_user_rate": _share(sum(r.speaks_as_user for r in mine), len(mine)),
            "failed_open": sum(r.failed_open for r in mine),
            "first_token_p50_general_ms": _p50([r.first_token_ms for r in gen]),
            "first_token_p50_memory_ms": _p50([r.first_token_ms for r in mem]),
            "memory_tokens": sum(r.memory_tokens for r in mine),
            "memory_tokens_general": sum(r.memory_tokens for r in gen),
            "retrieved_memory": _share(sum(r.retrieved for r in mem), len(mem)),
            "retrieved_general": _share(sum(r.retrieved for r in gen), len(gen)),
            "reply_errors": sum(r.reply_error is not None for r in mine),
            "n_memory": len(mem),
            "n_general": len(gen),
        }
        kinds: dict[str, list[Row]] = {}
        for r in mine:
            kinds.setdefault(r.kind, []).append(r)
        figures["accuracy_by_kind"] = {
            kind: {"n": len(rs), "accuracy": _share(sum(r.correct for r in rs), len(rs))}
            for kind, rs in sorted(kinds.items())
        }
        scored = [r for r in mine if r.f1 is not None]
        if scored:
            figures["f1"] = round(sum(r.f1 or 0.0 for r in scored) / len(scored), 4)
            figures["f1_by_category"] = {
                kind: round(sum(r.f1 or 0.0 for r in rs) / len(rs), 4)
                for kind, rs in sorted(kinds.items())
                if all(r.f1 is not None for r in rs)
            }
        out[mode] = figures
    return out


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


def _table(result: dict[str, Any]) -> str:
    lines = [
        f"model={result['model']} endpoint={result['endpoint']}",
        f"{'mode':18} {'mem acc':>7} {'gen acc':>7} {'damaged':>7} {'boiler':>6} {'as user':>7} "
        f"{'f-open':>6} {'1st tok gen':>11} {'1st tok mem':>11} {'mem tok':>7}",
    ]
    for mode, f in result["modes"].items():

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f}"

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:,.0f} ms"

        lines.append(
            f"{mode:18} {pct(f['memory_accuracy']):>7} {pct(f['general_accuracy']):>7} "
            f"{pct(f['leak_rate']):>7} {pct(f['boilerplate_rate']):>6} "
            f"{pct(f['speaks_as_user_rate']):>7} {f['failed_open']:>6} "
            f"{ms(f['first_token_p50_general_ms']):>11} {ms(f['first_token_p50_memory_ms']):>11} "
            f"{f['memory_tokens']:>7}" + (f"  F1 {f['f1']:.3f}" if "f1" in f else "")
        )
    return "\n".join(lines)


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
    print(json.dumps(result) if args.json else _table(result))
    return 0
