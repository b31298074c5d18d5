"""Corrections decide first: a message close to one the user corrected takes its decision.

`CorrectedGate` wraps any judging gate (llm, local, cascade). Before the gate is asked, the
message is embedded as the local gate reads it (`gate_text`) with the same MiniLM; the
encoder's single-text cache then hands the local gate that very vector, so a message is
embedded once. The nearest correction at or above `CORRECTION_SIMILARITY` decides, with no
model call; otherwise the wrapped gate decides as it always does.

The rule modes (always, never, length) are not wrapped: they judge nothing, and a
presenter picks them to show a fixed baseline, which a correction must not bend. The
decision chain (gates/registry.py) runs the vocabulary rule after this wrapper, and it
turns only the gate's own skips into retrieves, so a correction stands.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from assistant.gates.base import GateDecision, Method, bounded
from assistant.gates.local.text import gate_text, memory_query

if TYPE_CHECKING:
    from assistant.gates.base import Conversation, Gate
    from memory.corrections import Correction, CorrectionBook
    from memory.embeddings import MiniLM

# Cosine between the two messages' MiniLM vectors (as the gate reads them) at or above
# which a correction decides. Chosen on the dev half of training/data/corrections/ and
# reported on the held-out half by bench/corrections_bench.py (docs/corrections.md): the
# top of the plateau where dev rewordings are all right and no dev unrelated message moves.
CORRECTION_SIMILARITY = 0.70
_QUOTE_CHARS = 40  # the corrected message as quoted in the badge's reason


class GateReader:
    """Messages -> vectors, read exactly as the local gate reads them (gate_text, bounded)."""

    def __init__(self, encoder: MiniLM | None = None) -> None:
        self._encoder = encoder

    @property
    def encoder(self) -> MiniLM:
        """The MiniLM encoder (the process-wide shared one unless given)."""
        if self._encoder is None:
            from memory.embeddings import shared_model

            self._encoder = shared_model()
        return self._encoder

    def __call__(self, messages: list[str]) -> np.ndarray:
        """One L2-normalised vector per message."""
        return self.encoder.encode([gate_text(bounded(m)[0]) for m in messages])


def encoder_of(gate: Any) -> MiniLM | None:
    """The MiniLM a gate embeds with (local, or a cascade's local part); None for others."""
    local = getattr(gate, "local", gate)
    encoder = getattr(local, "encoder", None)
    return encoder() if callable(encoder) else None


def correction_reason(correction: Correction) -> str:
    """The badge's reason: it was the user's correction, and of which message."""
    quoted = correction.message
    if len(quoted) > _QUOTE_CHARS:
        quoted = quoted[:_QUOTE_CHARS].rsplit(" ", 1)[0] + "…"
    return f'decided by your correction: "{quoted}"'


class CorrectedGate:
    """A gate that lets the user's corrections decide messages close to corrected ones."""

    def __init__(
        self,
        inner: Gate,
        book: CorrectionBook,
        *,
        reader: GateReader | None = None,
        threshold: float = CORRECTION_SIMILARITY,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.inner = inner
        self.book = book
        # The wrapped gate's own encoder, so its embedding call finds our vector cached.
        self.reader = reader or GateReader(encoder_of(inner))
        self.threshold = threshold
        self._clock = clock

    @property
    def name(self) -> str:
        """The wrapped gate's mode: a correction changes decisions, not the mode."""
        return self.inner.name

    def __getattr__(self, attr: str) -> Any:
        # warm(), weights, llm_calls ... of the wrapped gate stay reachable.
        if attr == "inner":  # not set yet (copy, pickle): no recursion
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """The nearest close correction's decision, else the wrapped gate's."""
        if not message.strip():
            return self.inner.decide(message, conversation)
        started = self._clock()
        # A follow-up is looked up as what it means with the conversation, as it was kept.
        meant = conversation.meant if conversation is not None else message
        vector = self.reader([meant or message])[0]
        hit = self.book.nearest(vector)
        if hit is None or hit[1] < self.threshold:
            decision = self.inner.decide(message, conversation)
            # Our look-up is part of this decision's time: say so.
            return replace(decision, elapsed_ms=(self._clock() - started) * 1000.0)
        correction = hit[0]
        text, truncated = bounded(message)
        return GateDecision(
            retrieve=correction.retrieve,
            query=memory_query(text) if correction.retrieve else "",
            reason=correction_reason(correction),
            method=Method.CORRECTION,
            gate=self.name,
            elapsed_ms=(self._clock() - started) * 1000.0,
            truncated=truncated,
            corrected_by=correction.id,
        )
