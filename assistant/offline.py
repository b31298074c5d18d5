"""The offline responder: useful replies with no model and no network, clearly labelled."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from assistant.arithmetic import answer_arithmetic
from assistant.respond import HistoryItem, Lookup, ReplyResult, ReplySource, TextCallback
from memory.records import Memory

NEEDS_A_MODEL = (
    "I'm running offline, without a language model, so I can only do arithmetic and look "
    "things up in your memories. General questions need a model: set ANTHROPIC_API_KEY, "
    "or point ANTHROPIC_BASE_URL at a local Anthropic-compatible server (llama.cpp, Ollama)."
)
NOTHING_FOUND = (
    "I searched your memories but found nothing relevant enough to quote. "
    "(Offline mode: with a model configured I could say more.)"
)
SEARCH_FAILED = (
    "I couldn't search your memories just now (the memory store failed), so I can't "
    "answer from them."
)
MAX_QUOTED = 3


class OfflineResponder:
    """Answers from the most relevant memories, computes arithmetic, and says what it can't do."""

    source = ReplySource.OFFLINE

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock

    def compose(
        self, message: str, memories: Sequence[Memory], lookup: Lookup = Lookup.SKIPPED
    ) -> str:
        """The reply text for one message."""
        arithmetic = answer_arithmetic(message)
        if arithmetic is not None:
            return arithmetic
        if memories:
            quoted = "\n".join(f"> {m.text}" for m in memories[:MAX_QUOTED])
            noun = "memory" if len(memories[:MAX_QUOTED]) == 1 else "memories"
            return f"From your {noun}:\n\n{quoted}"
        if lookup is Lookup.FAILED:
            return SEARCH_FAILED
        return NOTHING_FOUND if lookup is Lookup.SEARCHED else NEEDS_A_MODEL

    def reply(
        self,
        message: str,
        memories: Sequence[Memory],
        history: Sequence[HistoryItem],
        on_text: TextCallback | None = None,
        lookup: Lookup = Lookup.SKIPPED,
    ) -> ReplyResult:
        """Reply at once; no tokens are spent."""
        started = self._clock()
        text = self.compose(message, memories, lookup)
        if on_text is not None:
            on_text(text)
        elapsed = (self._clock() - started) * 1000.0
        return ReplyResult(
            text=text, source=self.source, first_token_ms=elapsed, elapsed_ms=elapsed
        )
