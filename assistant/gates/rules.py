"""The rule gates: fixed baselines (always, never, length) that read the message alone.

They judge nothing: a presenter picks one to show a baseline, for comparison and for the
UI's always/never switches, so neither corrections nor the conversation bend them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from assistant.config import GateMode
from assistant.gates.base import GateDecision, Method, bounded, empty_decision

if TYPE_CHECKING:
    from assistant.gates.base import Conversation


class RuleGate:
    """A fixed baseline rule, for comparison and for the UI's always/never switches."""

    def __init__(self, name: str, rule: Callable[[str], bool], reason: Callable[[bool], str]):
        self.name = name
        self._rule = rule
        self._reason = reason

    def warm(self) -> None:
        """A rule has nothing to load."""

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """Apply the rule to the message alone; instant, never calls a model."""
        if not message.strip():
            return empty_decision(self.name)
        started = time.perf_counter()
        retrieve = self._rule(message)
        query, truncated = bounded(message)
        return GateDecision(
            retrieve=retrieve,
            query=query if retrieve else "",
            reason=self._reason(retrieve),
            method=Method.RULE,
            gate=self.name,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            truncated=truncated,
        )


LENGTH_CUTOFF = 30  # as in small agent projects: short messages are assumed to be chit-chat


def always_gate() -> RuleGate:
    """Retrieve on every turn, as mem0, Zep and ChatGPT memory do."""
    return RuleGate(GateMode.ALWAYS.value, lambda _m: True, lambda _r: "always retrieve")


def never_gate() -> RuleGate:
    """Never search memory: the no-memory baseline."""
    return RuleGate(GateMode.NEVER.value, lambda _m: False, lambda _r: "memory off")


def length_gate(cutoff: int = LENGTH_CUTOFF) -> RuleGate:
    """Skip messages of `cutoff` characters or fewer: the cheap baseline to beat."""
    return RuleGate(
        GateMode.LENGTH.value,
        lambda m: len(m.strip()) > cutoff,
        lambda r: f"longer than {cutoff} chars" if r else f"{cutoff} chars or shorter",
    )
