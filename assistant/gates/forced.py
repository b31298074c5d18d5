"""The forced gate: a decision already made, given to the chain in the gate's place.

A re-run after the user corrected a skip (gates/corrections/actions.py, `Rerun`) is
answered with the decision the correction made. The decision chain (gates/registry.py)
treats it as final: no vocabulary rule, and the conversation only lends its standalone
query to a retrieve.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.gates.base import Conversation, GateDecision


@dataclass(frozen=True)
class Forced:
    """A gate that returns one decision, made before the turn started."""

    decision: GateDecision

    @property
    def name(self) -> str:
        """The mode that made the decision."""
        return self.decision.gate

    def warm(self) -> None:
        """Nothing to load."""

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """The decision given, whatever the message."""
        return self.decision
