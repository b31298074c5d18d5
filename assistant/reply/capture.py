"""Memory capture: facts the user states about their life are saved after the reply."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.runtime.completion import ModelCallError
from assistant.runtime.llm import MessagesApi, json_span
from assistant.text import Label
from memory.facts import NEGATION as _NEGATION
from memory.injection import instruction_flag
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

# Whole words only: "Notebook for sale" is not "note: book for sale".
_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|don'?t forget|keep in mind)\b"
    r"\s*(?:that\b|:|,)?\s*(?P<fact>.+)$",
    re.IGNORECASE | re.DOTALL,
)
# "Remember what I told you…" asks for a memory; it does not state one.
# A request for help, anywhere in a message: it asks, it states nothing about the user.
REQUEST = re.compile(
    r"\b(?:can you|could you|would you|please (?:help|write|tell|explain|fix)|help me)\b",
    re.IGNORECASE,
)
# Opening with a command or a question word, a message asks ("Plan my weekend", "what's 2+2").
ASKS = re.compile(
    r"^\s*(?:please\s+)?(?:tell|write|give|show|explain|make|plan|list|help|find|suggest|"
    r"recommend|describe|summari[sz]e|translate|create|draft|compose|generate|calculate|"
    r"compute|convert|compare|name|define|teach|play|sing|draw|imagine|pretend|let'?s|"
    r"what|what'?s|whats|who|who'?s|when|where|why|how|which|can|could|would|will|should|"
    r"do|does|did|is|are|was|were|am)\b",
    re.IGNORECASE,
)
_ASKS_TO_RECALL = re.compile(
    r"^\s*(?:what|when|where|who|whom|which|why|how|if|whether)\b", re.IGNORECASE
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
    r"^\s*i'?m\s+(?:not sure|confused|asking|wondering|curious)\b|"
    # "I need a gift idea for Mom" asks for ideas; a model wrote "Mom is looking for a gift".
    r"^\s*(?:i|we)\s+(?:need|want|would like|'d like)\s+(?:a|an|some)?\s*(?:[\w-]+\s+)?"
    r"(?:ideas?|suggestions?|recommendations?|advice|tips|help)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.:,]\d+)*")
_DIGIT_EDGE = re.compile(r"(?<=\d)(?=[A-Za-z])|(?<=[A-Za-z])(?=\d)")  # "7:30pm" -> "7:30 pm"
# Words a model adds when it rewrites a statement as a fact ("The user's name is…").
_FACT_GLUE = frozenset({"user", "name", "named", "call", "called"})
# A model's fact is the user's own words: this share of its content words is in the message.
GROUNDED_SHARE = 0.6


class CaptureMethod(Label):
    """How capture looked for facts in one message."""

    OFF = "off"  # capture did not run
    RULES = "rules"  # the offline rules (no model, or the model failed)
    MODEL = "model"  # the capture model, its facts checked against the message
    NONE = "none"  # nothing in the message to capture, so nothing was asked


@dataclass(frozen=True)
class CaptureResult:
    """What capture did with one message."""

    saved: tuple[str, ...] = ()  # new memories
    known: tuple[str, ...] = ()  # near-duplicates of memories we had: updated, not added
    dropped: tuple[str, ...] = ()  # the model's "facts" that the message does not state
    # Read like instructions to the assistant (memory/injection.py): a memory is never a
    # command, so capture does not save them from a chat message.
    refused: tuple[str, ...] = ()
    method: CaptureMethod = CaptureMethod.OFF
    error: str | None = None
    elapsed_ms: float = 0.0

    @property
    def summary(self) -> str:
        """A one-line account for the UI, e.g. "saved: I'm meeting Alex on Friday"."""
        parts = [f"saved: {fact}" for fact in self.saved]
        parts += [f"already known: {fact}" for fact in self.known]
        if self.dropped:
            # A model's invented "fact" is not shown beside the reply (it reads as if the
            # assistant said it): only a count here; the details list the texts.
            n = len(self.dropped)
            parts.append(f"{n} {'suggestion' if n == 1 else 'suggestions'} not saved")
        parts += [f"not saved, it reads like an instruction to me: {fact}" for fact in self.refused]
        if self.error:
            parts.append(f"capture problem: {self.error}")
        return " · ".join(parts)


def rule_facts(message: str) -> list[str]:
    """Facts stated in plain words, found without a model ("remember that…", "I'm meeting…")."""
    text = message.strip()
    if not text or len(text) > MAX_FACT_CHARS:
        return []
    if text.endswith("?"):
        return []  # questions are never saved, "remember…?" included
    remember = _REMEMBER.match(text)
    if remember:
        fact = remember["fact"].strip().rstrip(".!")
        if not fact or _ASKS_TO_RECALL.match(fact):
            return []
        return [fact[0].upper() + fact[1:]]
    if REQUEST.search(text) or _NOT_A_FACT.match(text) or ASKS.match(text):
        return []
    if _FIRST_PERSON.match(text) and len(text.split()) >= 3:
        return [text.rstrip(".!")]
    return []


_MARKUP = re.compile(r"<[^>]*>|\]\([^)]*\)|https?://\S+|[*_`#>\[\]|~]+")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_LETTER_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_PERSONAL = re.compile(
    r"\b(?:i|i'm|im|i've|i'll|i'd|me|my|mine|we|we're|we've|we'll|our|us)\b|\b[A-Z][a-z]+'s\b",
    re.IGNORECASE,
)


def might_hold_a_fact(message: str) -> bool:
    """Cheap pre-check so only a message that states something costs a model call.

    A statement is a sentence that is not a question or a request, with three words or
    more, that speaks of the user or someone's ("I", "my", "we", "Jordan's"). Markup,
    links and code marks are not words: a message of pure markup states nothing.
    """
    text = _MARKUP.sub(" ", message).strip()
    if not text:
        return False
    if _REMEMBER.match(text):
        return True
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if len(_LETTER_WORD.findall(sentence)) < 3 or sentence.endswith("?"):
            continue
        if ASKS.match(sentence) or REQUEST.search(sentence) or _NOT_A_FACT.match(sentence):
            continue
        if _PERSONAL.search(sentence):
            return True
    return False


def _content_words(text: str) -> set[str]:
    from memory.lexical import tokenize

    # Pronouns are stopwords, so "my" in the message and "I" in the fact don't matter.
    return set(tokenize(_DIGIT_EDGE.sub(" ", text)))


def grounded(fact: str, message: str) -> bool:
    """True when a fact comes from the message: its numbers and most of its words are there."""
    # A small model turns "Tell me a joke" into "I can't tell you a joke right now": a
    # "fact" the user never stated. Facts must be traceable to the user's own words.
    said = _content_words(message)
    words = _content_words(fact) - _FACT_GLUE
    if not words:
        return False
    if not set(_NUMBER.findall(fact)) <= set(_NUMBER.findall(message)):
        return False  # an invented or changed date, time, amount or code
    if _NEGATION.search(fact) and not _NEGATION.search(message):
        return False  # "I can't …" from a message that negates nothing flips its meaning
    return len(words & said) / len(words) >= GROUNDED_SHARE


def parse_facts(text: str) -> list[str]:
    """Read {"facts": [...]} from the model's text; raises ValueError when it is not there."""
    span = json_span(text)
    if not span:
        raise ValueError("capture model returned no JSON")
    data = json.loads(span)
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
        self._api = (
            MessagesApi(
                client, model, max_tokens=EXTRACT_MAX_TOKENS, timeout=timeout, max_retries=1
            )
            if client is not None and model
            else None
        )
        self._clock = clock

    def _model_facts(self, api: MessagesApi, message: str) -> list[str]:
        prompt = EXTRACT_PROMPT.format(message=message)
        return parse_facts(api.ask([{"role": "user", "content": prompt}]).text)

    def capture(self, message: str) -> CaptureResult:
        """Extract and save facts; a failing model falls back to the rules, losing nothing."""
        started = self._clock()
        error = None
        dropped: list[str] = []
        if self._api is not None:
            if not might_hold_a_fact(message):
                return CaptureResult(
                    method=CaptureMethod.NONE, elapsed_ms=(self._clock() - started) * 1e3
                )
            method = CaptureMethod.MODEL
            try:
                proposed = self._model_facts(self._api, message[: MAX_FACT_CHARS * 4])
                facts = [f for f in proposed if grounded(f, message)]
                dropped = [f for f in proposed if f not in facts]
            except (
                ModelCallError,
                ValueError,
            ) as exc:  # a failed extraction must not lose the fact
                # Our own parse errors say what was wrong; model errors get the short account.
                what = exc.description if isinstance(exc, ModelCallError) else str(exc)
                error = f"{what}; used the offline rules instead"
                method, facts = CaptureMethod.RULES, rule_facts(message)
        else:
            method, facts = CaptureMethod.RULES, rule_facts(message)
        saved: list[str] = []
        known: list[str] = []
        refused = [f for f in facts if instruction_flag(f)]
        for fact in (f for f in facts if f not in refused):
            try:
                added = self._store.remember(fact, source="captured")
            except MemoryStoreError as exc:
                error = str(exc)
                continue
            (known if added.merged else saved).append(fact)
        return CaptureResult(
            saved=tuple(saved),
            known=tuple(known),
            dropped=tuple(dropped),
            refused=tuple(refused),
            method=method if facts or dropped or error else CaptureMethod.NONE,
            error=error,
            elapsed_ms=(self._clock() - started) * 1000.0,
        )
