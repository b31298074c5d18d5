"""The local gate: the trained network over MiniLM and the text cues, plus the rule."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.config import GateMode
from assistant.gates.base import GateDecision, Method, bounded, empty_decision
from assistant.gates.local.badge import reason
from assistant.gates.local.cues import hand_features
from assistant.gates.local.language import unfamiliar
from assistant.gates.local.rule import explicit_memory_reference
from assistant.gates.local.text import gate_text, memory_query
from assistant.gates.local.weights import WEIGHTS_PATH, GateWeights

if TYPE_CHECKING:  # memory.embeddings imports chromadb: only pay for it when the gate runs
    from assistant.gates.base import Conversation
    from memory.embeddings import MiniLM


def featurize_texts(model: MiniLM, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(features, cues) of gate_texts: [MiniLM embedding | hand cues], and the cues alone."""
    embedded = model.encode(texts)
    cues = np.stack([hand_features(t) for t in texts]) if texts else np.zeros((0, 0))
    return np.hstack([embedded.astype(np.float64), cues.astype(np.float64)]), cues


def featurize(model: MiniLM, messages: list[str]) -> np.ndarray:
    """[MiniLM embedding | hand cues] of each message, read as the gate reads it."""
    return featurize_texts(model, [gate_text(m) for m in messages])[0]


class LocalGate:
    """The trained classifier as a gate: ~5 ms a decision, no network."""

    name = GateMode.LOCAL.value

    def __init__(
        self,
        model: MiniLM | None = None,
        weights_path: Path = WEIGHTS_PATH,
        threshold: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._model = model
        self._weights_path = Path(weights_path)
        self._threshold = threshold
        self._clock = clock
        self._weights: GateWeights | None = None
        self._lock = threading.Lock()

    @property
    def weights(self) -> GateWeights:
        """The trained weights, loaded on first use."""
        with self._lock:
            if self._weights is None:
                self._weights = GateWeights.load(self._weights_path)
            return self._weights

    @property
    def threshold(self) -> float:
        """P(retrieve) at or above which the gate retrieves."""
        return self.weights.threshold if self._threshold is None else self._threshold

    @property
    def weights_path(self) -> Path:
        """Where the weights are read from."""
        return self._weights_path

    def encoder(self) -> MiniLM:
        """The embedding model (the process-wide shared one unless given)."""
        if self._model is None:
            from memory.embeddings import shared_model

            self._model = shared_model()
        return self._model

    def warm(self) -> None:
        """Load weights and the embedding model, and infer once, so the first decision is fast."""
        _ = self.weights
        self.encoder().warm()
        self.probability("When is my dentist appointment?")

    def probabilities(self, messages: list[str]) -> np.ndarray:
        """The classifier's P(retrieve) for many messages (one batched embedding call)."""
        weights = self.weights  # first: missing weights fail before the model loads
        return weights.probability(featurize(self.encoder(), messages))

    def retrieves(self, messages: list[str]) -> np.ndarray:
        """The gate's decisions for many messages: the classifier or an explicit reference."""
        explicit = [explicit_memory_reference(gate_text(m)) for m in messages]
        return (self.probabilities(messages) >= self.threshold) | np.array(explicit, dtype=bool)

    def probability(self, message: str) -> float:
        """The classifier's P(retrieve) for one message (no timing, no decision)."""
        return float(self.probabilities([message])[0])

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """Classify the message alone; the reason names the strongest cue and the probability.

        The conversation is the chain's to apply (assistant/conversation): the classifier
        was trained and measured on messages that stand alone.
        """
        if not message.strip():
            return empty_decision(self.name)
        started = self._clock()
        bounded_text, truncated = bounded(message)
        text = gate_text(bounded_text)
        weights = self.weights  # first: missing weights fail before the model loads
        # One reading of the text: the classifier, the rule and the badge share it.
        features, cues = featurize_texts(self.encoder(), [text])
        p = float(weights.probability(features)[0])
        explicit = explicit_memory_reference(text)
        # A message mostly of words it was never trained on is one it cannot judge: it
        # fails open.
        unread = not explicit and p < self.threshold and unfamiliar(text, weights.vocabulary)
        retrieve = explicit or unread or p >= self.threshold
        by_rule = explicit and p < self.threshold
        said = (
            f"mostly words this gate was not trained on: searched to be safe, p={p:.2f}"
            if unread
            else reason(cues[0], retrieve, p, explicit, by_rule)
        )
        return GateDecision(
            retrieve=retrieve,
            query=memory_query(bounded_text) if retrieve else "",
            reason=said,
            method=Method.LOCAL,
            gate=self.name,
            elapsed_ms=(self._clock() - started) * 1000.0,
            truncated=truncated,
            confidence=p,
        )
