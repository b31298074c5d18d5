"""The answer evaluation's inputs: memories, questions and LoCoMo, read and checked."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.jsonl import JsonlError, read_jsonl

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class DataError(ValueError):
    """An input file cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Question:
    """One question with its gold answers; in a conversation, its last turn."""

    question: str
    answers: tuple[str, ...]
    needs_memory: bool
    kind: str = ""
    match: str = "contains"
    category: int | None = None  # LoCoMo's QA category (then scored by token F1)
    # A conversation's turns before the scored one, played first with history; the gold
    # answers and needs_memory are about `question`, the last turn.
    earlier: tuple[str, ...] = ()

    @property
    def turns(self) -> tuple[str, ...]:
        """Every user turn, the scored one last (a single question: itself alone)."""
        return (*self.earlier, self.question)


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


def _turns(row: dict[str, Any], where: str) -> list[str]:
    # One of "question" (a message alone) or "turns" (a conversation, the last one scored).
    if ("question" in row) == ("turns" in row):
        raise DataError(f"{where}: give either 'question' or 'turns'")
    if "question" in row:
        question = row["question"]
        if not isinstance(question, str) or not question.strip():
            raise DataError(f"{where}: 'question' must be a non-empty string")
        return [question]
    turns = row["turns"]
    if not isinstance(turns, list) or not turns:
        raise DataError(f"{where}: 'turns' must be a non-empty list of messages")
    if not all(isinstance(t, str) and t.strip() for t in turns):
        raise DataError(f"{where}: every one of 'turns' must be a non-empty string")
    return turns


def read_questions(path: Path) -> list[Question]:
    """Questions from `{"question" or "turns", "answers", "needs_memory"}` lines."""
    out = []
    for number, row in _lines(path):
        *earlier, question = _turns(row, f"{path}, line {number}")
        answers, needs = row.get("answers"), row.get("needs_memory")
        if not isinstance(answers, list) or not answers:
            raise DataError(f"{path}, line {number}: 'answers' must be a non-empty list")
        if not isinstance(needs, bool):
            raise DataError(f"{path}, line {number}: 'needs_memory' must be true or false")
        match = row.get("match", "contains")
        if match not in ("contains", "last_number"):
            raise DataError(f"{path}, line {number}: 'match' must be contains or last_number")
        kind = str(row.get("kind") or ("memory" if needs else "general"))
        gold = tuple(str(a) for a in answers)
        out.append(Question(question, gold, needs, kind, match, earlier=tuple(earlier)))
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
