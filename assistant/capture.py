"""Memory capture: facts the user states about their life are saved after the reply."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.llm import describe_error, text_of
from memory.records import MemoryStoreError

if TYPE_CHECKING:  # the store imports Chroma; capture only needs its type here
    from memory.store import MemoryStore

EXTRACT_MAX_TOKENS = 400
MAX_FACT_CHARS = 500
MAX_FACTS = 5

EXTRACT_PROMPT = """Extract durable facts that the user states about themselves in the \
message below: their life, people they know, plans with dates, preferences, health, work, \
travel. Ignore questions, requests, and anything about the assistant. Write each fact as a \
short sentence in the user's own first person, keeping names, dates and times.

Reply with ONLY JSON: {{"facts": ["..."]}} (an empty list when there are none).

<message>
{message}
</message>"""

_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|don'?t forget|keep in mind)"
    r"\s*(?:that|:|,)?\s*(?P<fact>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_FIRST_PERSON = re.compile(
    r"^\s*(?:i|i'm|im|i am|i've|i have|i'll|i will|i was|i had|my|we|we're|we are|we've|"
    r"we'll|our)\b",
    re.IGNORECASE,
)
# First-person openings that talk about the conversation, not the user's life.
_NOT_A_FACT = re.compile(
    r"^\s*(?:i|we)\s+(?:think|guess|mean|wonder|want you|need you|would like you|see|agree|"
    r"disagree|don'?t understand|don'?t know|have a question|was wondering)\b|"
    r"^\s*i'?m\s+(?:not sure|confused|asking|wondering|curious)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:can you|could you|would you|please (?:help|write|tell|explain|fix)|help me)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CaptureResult:
    """What capture did with one message."""

    saved: tuple[str, ...] = ()  # new memories
    known: tuple[str, ...] = ()  # near-duplicates of memories we had: updated, not added
    method: str = "off"  # off | rules | model | none
    error: str | None = None
    elapsed_ms: float = 0.0

    @property
    def summary(self) -> str:
        """A one-line account for the UI, e.g. "saved: I'm meeting Alex on Friday"."""
        parts = [f"saved: {fact}" for fact in self.saved]
        parts += [f"already known: {fact}" for fact in self.known]
        if self.error:
            parts.append(f"capture problem: {self.error}")
        return " · ".join(parts)


def rule_facts(message: str) -> list[str]:
    """Facts stated in plain words, found without a model ("remember that…", "I'm meeting…")."""
    text = message.strip()
    if not text or len(text) > MAX_FACT_CHARS:
        return []
    remember = _REMEMBER.match(text)
    if remember:
        fact = remember["fact"].strip().rstrip(".!")
        return [fact[0].upper() + fact[1:]] if fact else []
    if text.endswith("?") or _REQUEST.search(text) or _NOT_A_FACT.match(text):
        return []
    if _FIRST_PERSON.match(text) and len(text.split()) >= 3:
        return [text.rstrip(".!")]
    return []


def might_hold_a_fact(message: str) -> bool:
    """Cheap pre-check so pure questions don't cost a model call."""
    text = message.strip()
    if not text:
        return False
    if _REMEMBER.match(text):
        return True
    return not (text.endswith("?") and not re.search(r"[.!]\s", text))


def parse_facts(text: str) -> list[str]:
    """Read {"facts": [...]} from the model's text; raises ValueError when it is not there."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("capture model returned no JSON")
    data = json.loads(text[start : end + 1])
    facts = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(facts, list):
        raise ValueError("capture model JSON has no 'facts' list")
    cleaned = [f.strip()[:MAX_FACT_CHARS] for f in facts if isinstance(f, str) and f.strip()]
    return cleaned[:MAX_FACTS]


class Capturer:
    """Finds facts in a message and saves them, deduplicated against the store."""

    def __init__(
        self,
        store: MemoryStore,
        client: Any = None,
        model: str | None = None,
        *,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._store = store
        self._client = client.with_options(max_retries=1) if client is not None else None
        self._model = model
        self._timeout = timeout
        self._clock = clock

    def _model_facts(self, message: str) -> list[str]:
        response = self._client.messages.create(
            model=self._model,
            max_tokens=EXTRACT_MAX_TOKENS,
            messages=[{"role": "user", "content": EXTRACT_PROMPT.format(message=message)}],
            timeout=self._timeout,
        )
        return parse_facts(text_of(response))

    def capture(self, message: str) -> CaptureResult:
        """Extract and save facts; a failing model falls back to the rules, losing nothing."""
        started = self._clock()
        error = None
        if self._client is not None and self._model:
            if not might_hold_a_fact(message):
                return CaptureResult(method="none", elapsed_ms=(self._clock() - started) * 1e3)
            method = "model"
            try:
                facts = self._model_facts(message[: MAX_FACT_CHARS * 4])
            except Exception as exc:  # noqa: BLE001 - a failed extraction must not lose the fact
                # Our own parse errors say what was wrong; SDK errors get the short account.
                what = str(exc) if isinstance(exc, ValueError) else describe_error(exc)
                error = f"{what}; used the offline rules instead"
                method, facts = "rules", rule_facts(message)
        else:
            method, facts = "rules", rule_facts(message)
        saved: list[str] = []
        known: list[str] = []
        for fact in facts:
            try:
                added = self._store.remember(fact, source="captured")
            except MemoryStoreError as exc:
                error = str(exc)
                continue
            (known if added.merged else saved).append(fact)
        return CaptureResult(
            saved=tuple(saved),
            known=tuple(known),
            method=method if facts or error else "none",
            error=error,
            elapsed_ms=(self._clock() - started) * 1000.0,
        )
