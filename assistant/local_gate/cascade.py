"""The cascade: the local gate first, the LLM gate only when the local one is unsure."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from assistant.gate import Gate, GateDecision, empty_decision
from assistant.local_gate.classifier import LocalGate
from assistant.local_gate.cues import explicit_memory_reference, gate_text


class CascadeGate:
    """Local gate first; the LLM gate only when the local probability is unsure."""

    name = "cascade"

    def __init__(
        self,
        local: LocalGate,
        llm: Gate,
        low: float | None = None,
        high: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.local = local
        self.llm = llm
        self._low = low
        self._high = high
        self._clock = clock
        self.llm_calls = 0  # how many decisions were handed to the LLM, for reports

    @property
    def band(self) -> tuple[float, float]:
        """The unsure band [low, high) of P(retrieve) that goes to the LLM."""
        weights = self.local.weights
        low = weights.cascade_low if self._low is None else self._low
        high = weights.cascade_high if self._high is None else self._high
        return low, high

    def decide(self, message: str) -> GateDecision:
        """Decide locally when sure; otherwise return the LLM's decision (it fails open).

        elapsed_ms is the whole decision, local and LLM; model_ms only the LLM's part, so
        the turn does not count the local gate's own time as time spent in a model.
        """
        if not message.strip():
            return empty_decision(self.name)
        started = self._clock()
        local = self.local.decide(message)
        low, high = self.band
        p = local.confidence if local.confidence is not None else 0.5
        # An explicit memory reference already retrieves: nothing for the LLM to settle.
        if low <= p < high and not explicit_memory_reference(gate_text(message)):
            self.llm_calls += 1
            asked = self.llm.decide(message)
            return replace(
                asked,
                gate=self.name,
                confidence=p,
                elapsed_ms=(self._clock() - started) * 1000.0,
            )
        return replace(local, gate=self.name, elapsed_ms=(self._clock() - started) * 1000.0)
