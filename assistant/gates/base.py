"""The gate contract: the decision record, the `Gate` protocol, and their helpers.

Every gate (assistant/gates/*) returns a `GateDecision`, so the UI, the pipeline and the
evaluations treat them alike. FAIL OPEN means retrieve: a stale memory beats a lost one.

A leaf but for three: `assistant.text`'s labels, the conversation's `Said`, and the gate
modes' names (`GateMode`, in `assistant.config`: a setting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from assistant.config import GateMode
from assistant.conversation.said import Said
from assistant.text import Label

MAX_GATE_MESSAGE_CHARS = 4000  # ~1k tokens: enough to judge, bounded cost for huge pastes
# The prompt asks for five words; small models write sentences. The badge shows at most
# this much, and the details show the whole reason.
BADGE_REASON_WORDS = 6
BADGE_REASON_CHARS = 48


class Method(Label):
    """How a gate decision was reached."""

    MODEL = "model"  # the LLM answered with usable JSON
    LOCAL = "local"  # the local classifier decided
    RULE = "rule"  # a fixed baseline rule (always / never / length)
    VOCABULARY = "vocabulary"  # a judged skip naming what memories mention (gates/vocabulary)
    FAILED_OPEN = "failed_open"  # something went wrong, so we retrieve
    EMPTY_INPUT = "empty_input"  # nothing to decide on; no model call
    CORRECTION = "correction"  # a message close to one the user corrected (gates/corrections)
    CONVERSATION = "conversation"  # a follow-up, decided with the turn it continues


@dataclass(frozen=True)
class GateDecision:
    """One gate verdict, with everything the UI shows beside the reply."""

    retrieve: bool
    query: str
    reason: str
    method: Method
    gate: str = GateMode.LLM.value  # the mode that produced it
    elapsed_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    truncated: bool = False  # the message was cut to MAX_GATE_MESSAGE_CHARS for the prompt
    confidence: float | None = None  # P(retrieve) where the gate has one
    called_model: bool = False  # a model request was made (its time is network, not ours)
    model_ms: float = 0.0  # the part of elapsed_ms spent waiting on a model request
    corrected_by: str | None = None  # the id of the user's correction that decided it
    # Where the query came from when the message was a follow-up ("from your last message"):
    # the search used the conversation's words, not the message's alone.
    query_source: str = ""

    @property
    def failed_open(self) -> bool:
        """True when the gate retrieved because it could not decide."""
        return self.method is Method.FAILED_OPEN

    @property
    def badge_reason(self) -> str:
        """The reason cut to fit the badge; `reason` keeps the full text for the details."""
        if self.method is not Method.MODEL:
            return self.reason  # our own reasons are written to fit
        words = self.reason.split()
        short = " ".join(words[:BADGE_REASON_WORDS])
        if len(short) > BADGE_REASON_CHARS:
            short = short[:BADGE_REASON_CHARS].rsplit(" ", 1)[0] or short[:BADGE_REASON_CHARS]
        return short if short == " ".join(words) else short.rstrip(" ,.;:") + "…"

    @property
    def label(self) -> str:
        """The badge text: retrieved, skipped or failed open."""
        if self.failed_open:
            return "failed open"
        return "retrieved" if self.retrieve else "skipped"


@dataclass(frozen=True)
class Conversation:
    """What a gate that reads the conversation is given with a message.

    The message is read with the last exchanges once per turn
    (assistant/conversation/reading.py); every gate in the chain gets that one reading.
    """

    said: tuple[Said, ...]  # the last exchanges, oldest first
    meant: str  # the message as read with the exchange it continues


class Gate(Protocol):
    """Anything that decides whether a message needs memory."""

    name: str

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """Return the decision for one user message, read with `conversation` if it may."""
        ...

    def warm(self) -> None:
        """Pay first-use costs now (weights, a first inference), not on the first message."""
        ...


def bounded(message: str, limit: int = MAX_GATE_MESSAGE_CHARS) -> tuple[str, bool]:
    """The message cut to `limit` characters for the prompt, and whether it was cut."""
    if len(message) <= limit:
        return message, False
    return message[:limit], True


def failed_open_decision(gate: str, message: str, exc: BaseException) -> GateDecision:
    """The decision when a gate raised instead of deciding: retrieve, and say why."""
    return GateDecision(
        retrieve=True,
        query=bounded(message)[0],
        reason=f"gate error ({type(exc).__name__}) — failing open",
        method=Method.FAILED_OPEN,
        gate=gate,
        truncated=bounded(message)[1],
    )


def empty_decision(gate: str) -> GateDecision:
    """The decision for an empty or whitespace-only message: skip, no model call."""
    return GateDecision(False, "", "empty message", Method.EMPTY_INPUT, gate=gate)


def model_call_decision(
    gate: str,
    retrieve: bool,
    query: str,
    reason: str,
    method: Method,
    elapsed_ms: float,
    tokens: tuple[int, int],
    truncated: bool,
    confidence: float | None = None,
) -> GateDecision:
    """A decision reached by one model request: all of its time is the request's."""
    return GateDecision(
        retrieve=retrieve,
        query=query,
        reason=reason,
        method=method,
        gate=gate,
        elapsed_ms=elapsed_ms,
        model_ms=elapsed_ms,  # the request is all this gate does
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        truncated=truncated,
        confidence=confidence,
        called_model=True,
    )
