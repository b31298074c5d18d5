"""Asking the questions: each one through each mode's front, a conversation turn by turn, scored.

A question alone is one `Assistant.answer` with no history. A conversation (`turns`) is
played as the app plays it: each earlier turn through the same mode's front with the
exchanges so far as history, without capture, then the last turn, which alone is scored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.eval.answer_data import Question
from assistant.eval.answer_match import is_correct
from assistant.eval.answer_report import Row
from assistant.eval.answer_score import (
    MemoryTerms,
    boilerplate,
    damage,
    note_read_back,
    speaks_as_user,
)
from assistant.eval.locomo_f1 import locomo_f1

if TYPE_CHECKING:
    from assistant.turn.chat import Exchange
    from assistant.turn.front import Assistant


@dataclass(frozen=True)
class Played:
    """One question played in one mode: the earlier exchanges, then the scored last one."""

    earlier: tuple[Exchange, ...]
    last: Exchange


def play(front: Assistant, question: Question) -> Played:
    """Play every turn through `front`, each with the exchanges before it as history."""
    from assistant.turn.chat import TurnOptions

    # No capture: a fact stated in one question must not change the store for the next.
    options = TurnOptions(capture=False)
    history: list[Exchange] = []
    for message in question.earlier:
        history.append(front.answer(message, history, options))
    return Played(tuple(history), front.answer(question.question, history, options))


def score(
    question: Question,
    mode: str,
    played: Played,
    terms: MemoryTerms,
    world: str | None = None,
    run: int = 1,
) -> Row:
    """The last turn's row: right, damaged (questions that need no memory), boilerplate."""
    turn = played.last.gated
    f1 = None
    if question.category is not None:
        f1 = round(locomo_f1(turn.reply, question.answers[0], question.category), 4)
    # The user's own earlier words are the conversation, not a leak of the memory store.
    said = "\n".join(question.turns)
    row = Row(
        question=question.question,
        mode=mode,
        needs_memory=question.needs_memory,
        kind=question.kind,
        retrieved=turn.decision.retrieve,
        failed_open=turn.decision.failed_open,
        gate_reason=turn.decision.reason,
        memories=[m.text for m in turn.memories],
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
        note_read_back=list(note_read_back(turn.reply, said)),
        query=turn.decision.query if turn.decision.retrieve else "",
        turns=list(question.turns),
        earlier_replies=[e.gated.reply for e in played.earlier],
        earlier_retrieved=[e.gated.decision.retrieve for e in played.earlier],
        run=run,
    )
    if not question.needs_memory:
        hurt = damage(turn.reply, said, question.answers, terms, world)
        row.leaked = hurt.damaged
        row.leak_terms = [*hurt.terms, *hurt.phrases, *hurt.about_you]
    return row


def run_questions(
    chats: dict[str, Any],
    questions: Sequence[Question],
    terms: MemoryTerms,
    progress: Callable[[str], None] | None = None,
    on_row: Callable[[Row], None] | None = None,
    run: tuple[int, int] = (1, 1),
) -> list[Row]:
    """Every question through each mode's front in turn, `never` first; last turns scored.

    Modes run one after another, not interleaved on each question: two modes that send
    the same memories for a question back to back would let the second reuse the first's
    prompt cache in llama.cpp (a tenth of the first-token time here), and the figures
    would measure the order. Run whole, each mode meets the cache as the app does: the
    system prompt warm, each message's memories fresh, and a conversation's last turn
    after its own earlier turns. `never` goes first because its replies are the world
    knowledge the damage rule subtracts. `run` is (this run, of how many), for --repeat.
    """
    modes = sorted(chats, key=lambda m: m != "never")
    rows: list[Row] = []
    world: dict[int, str] = {}
    started = time.perf_counter()
    total = len(modes) * len(questions)
    label = f" run {run[0]}/{run[1]}" if run[1] > 1 else ""
    for m, mode in enumerate(modes):
        for i, question in enumerate(questions):
            row = score(question, mode, play(chats[mode], question), terms, world.get(i), run[0])
            if mode == "never":
                world[i] = row.reply
            rows.append(row)
            if on_row is not None:
                on_row(row)
            if progress is not None:
                done = m * len(questions) + i + 1
                secs = time.perf_counter() - started
                mark = f"{'R' if row.retrieved else '-'}{'✓' if row.correct else '✗'}"
                mark += "!" if row.leaked else ""
                shown = " → ".join(question.turns)
                progress(
                    f"[{done}/{total}]{label} {mode} {mark} {shown[-60:]!r} · {secs:.0f} s, "
                    f"~{secs / done * (total - done):.0f} s left"
                )
    return rows


def run_repeats(
    chats: dict[str, Any],
    questions: Sequence[Question],
    terms: MemoryTerms,
    repeat: int = 1,
    progress: Callable[[str], None] | None = None,
    on_row: Callable[[Row], None] | None = None,
) -> list[Row]:
    """`run_questions` `repeat` times over, whole each time: sampled replies differ by run."""
    rows: list[Row] = []
    for n in range(1, repeat + 1):
        rows += run_questions(chats, questions, terms, progress, on_row, run=(n, repeat))
    return rows
