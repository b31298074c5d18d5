"""The cascade: the local gate first; the LLM only where it was measured to help.

The LLM's answer is combined with the local probability, not swapped in for it: the
decision is the sign of the local margin (logit of P(retrieve) minus the threshold's)
plus `trust.weight` times the LLM's margin. `trust` comes from held-out measurement
(assistant/gates/trust.py). With a weight of 0 the LLM could never change a decision, so
it is not asked at all and the cascade decides exactly as the local gate does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from assistant.config import GateMode
from assistant.gates.base import empty_decision
from assistant.gates.local.rule import explicit_memory_reference
from assistant.gates.local.text import gate_text
from assistant.gates.trust import LlmTrust, logit

if TYPE_CHECKING:
    from assistant.gates.base import Conversation, Gate, GateDecision
    from assistant.gates.local.classifier import LocalGate


class CascadeGate:
    """Local gate first; the LLM's vote is added where measurement says it helps."""

    name = GateMode.CASCADE.value

    def __init__(
        self,
        local: LocalGate,
        llm: Gate,
        trust: LlmTrust | None = None,
        *,
        low: float | None = None,
        high: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.local = local
        self.llm = llm
        self.trust = trust or LlmTrust("unmeasured")
        self._low = low  # an explicit band [low, high) of P(retrieve), for tests and sweeps
        self._high = high
        self._clock = clock
        self.llm_calls = 0  # how many decisions asked the LLM, for reports

    def warm(self) -> None:
        """Warm the local gate; the LLM's endpoint is warmed by its own first request."""
        self.local.warm()

    @property
    def given_band(self) -> tuple[float, float]:
        """[low, high) of P(retrieve): as given, else the local gate's own unsure band."""
        weights = self.local.weights
        low = weights.cascade_low if self._low is None else self._low
        high = weights.cascade_high if self._high is None else self._high
        return low, high

    def band(self, p: float) -> bool:
        """True when the local probability `p` is unsure enough to ask the LLM."""
        if not self.trust.asks_llm:
            return False
        if self._low is not None or self._high is not None or self.trust.band is None:
            # Given, or unmeasured: the local gate's own unsure band from its training.
            low, high = self.given_band
            return low <= p < high
        return abs(logit(p) - logit(self.local.threshold)) < self.trust.band

    @property
    def reads_conversation(self) -> bool:
        """True when the LLM it asks reads a follow-up's last exchanges."""
        return bool(getattr(self.llm, "reads_conversation", False))

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """Decide locally when sure; otherwise add the LLM's vote (a failing LLM retrieves).

        elapsed_ms is the whole decision, local and LLM; model_ms only the LLM's part, so
        the turn does not count the local gate's own time as time spent in a model.
        """
        if not message.strip():
            return empty_decision(self.name)
        started = self._clock()
        local = self.local.decide(message)
        p = local.confidence if local.confidence is not None else 0.5
        # An explicit memory reference already retrieves: nothing for the LLM to settle.
        if not self.band(p) or explicit_memory_reference(gate_text(message)):
            return replace(local, gate=self.name, elapsed_ms=(self._clock() - started) * 1e3)
        self.llm_calls += 1
        asked = self.llm.decide(message, conversation)
        elapsed = (self._clock() - started) * 1000.0
        if asked.failed_open:
            return replace(asked, gate=self.name, confidence=p, elapsed_ms=elapsed)
        margin = logit(p) - logit(self.local.threshold)
        vote = self.trust.weight * self.trust.llm_margin(asked.retrieve, asked.confidence)
        retrieve = margin + vote >= 0
        # The LLM was asked: its words stand when its answer stands; when its vote was
        # outweighed, the local gate's do. The method says which it was.
        chosen = asked if retrieve == asked.retrieve else local
        return replace(
            chosen,
            retrieve=retrieve,
            query=chosen.query or (local.query if retrieve else ""),
            gate=self.name,
            confidence=p,
            elapsed_ms=elapsed,
            called_model=True,
            model_ms=asked.model_ms,
            input_tokens=asked.input_tokens,
            output_tokens=asked.output_tokens,
        )
