"""What the "Wrong decision?" button does: record the opposite decision, and say what next.

The UI calls `can_correct` to show the button on a badge and `Chat.correct` when it is
pressed; that records the correction (`correct`) and, for a skip corrected to "should have
searched memory", returns a `Rerun` that `Chat.answer` answers with `rerun_decision` as the
gate's decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.gates.base import GateDecision, Method, bounded
from assistant.gates.local.text import memory_query

if TYPE_CHECKING:
    from memory.corrections import Correction, CorrectionBook
    from memory.embeddings import MiniLM
    from memory.store import MemoryStore

BUTTON_LABEL = "Wrong decision?"
RERUN_NOTE = "re-run after your correction"
# Nothing to correct: a failed-open gate did not decide, an empty message was not judged,
# and a rule mode (always / never / length) is the baseline the presenter chose, not a
# judgement. The vocabulary rule (Method.VOCABULARY) is a heuristic's guess: correctable.
_NOT_CORRECTABLE = (Method.FAILED_OPEN, Method.EMPTY_INPUT, Method.RULE)


@dataclass(frozen=True)
class CorrectionResult:
    """A recorded correction, and whether the message must be answered again with memory."""

    correction: Correction
    rerun_with_memory: bool  # a skip was corrected: answer again, now searching memory

    @property
    def said(self) -> str:
        """What the user said, in their words, for a confirmation line."""
        return verdict(self.correction)


def verdict(correction: Correction) -> str:
    """A correction in the user's words: what the gate should have done with the message."""
    return "should have searched memory" if correction.retrieve else "didn't need memory"


@dataclass(frozen=True)
class Rerun:
    """A message to answer again as a new turn, with the gate's decision already made.

    `corrects` is the id of the turn whose decision was corrected: the re-run's history
    leaves that turn out, so the model is not shown the wrong answer to the same message.
    """

    message: str
    decision: GateDecision
    corrects: int | None = None


def rerun_of(result: CorrectionResult, message: str, corrects: int | None = None) -> Rerun | None:
    """The re-run a correction asks for (a corrected skip), or None (a corrected retrieve)."""
    if not result.rerun_with_memory:
        return None
    return Rerun(message, rerun_decision(result, message), corrects)


def correction_for(book: CorrectionBook, message: str) -> Correction | None:
    """The user's correction of exactly this message, if they made one (and kept it)."""
    from memory.facts import text_id
    from memory.records import MemoryStoreError, clean_text

    try:
        text = clean_text(message, "the message")
    except MemoryStoreError:
        return None  # a message that cannot be stored can never have been corrected
    return book.get(text_id(book.user_id, text))


def standing_correction(
    book: CorrectionBook, message: str, decision: GateDecision
) -> Correction | None:
    """The user's correction of this very message that overturned `decision`, if any.

    None too when the corrections cannot be read: the sidebar's list says why.
    """
    from memory.records import MemoryStoreError

    try:
        standing = correction_for(book, message)
    except MemoryStoreError:
        return None
    return standing if standing is not None and standing.retrieve != decision.retrieve else None


def can_correct(decision: GateDecision) -> bool:
    """True when the badge of `decision` gets a "Wrong decision?" button."""
    return decision.method not in _NOT_CORRECTABLE


def opposite_label(decision: GateDecision) -> str:
    """What pressing the button will record, for the button's help text."""
    return "didn't need memory" if decision.retrieve else "should have searched memory"


def correct(book: CorrectionBook, message: str, decision: GateDecision) -> CorrectionResult:
    """Record the opposite of `decision` for `message`; ValueError if nothing to correct."""
    if not can_correct(decision):
        raise ValueError(f"a {decision.label} decision ({decision.method.value}) has no correction")
    right = not decision.retrieve
    # A follow-up is kept as what it meant ("meeting Alex What time?"), not its bare words:
    # a correction of "What time?" must not decide every later "What time?" of any chat.
    meant = decision.query if decision.query_source else message
    correction = book.add(meant, right, gate=decision.gate, reason=decision.reason)
    return CorrectionResult(correction, rerun_with_memory=right)


def rerun_decision(result: CorrectionResult, message: str) -> GateDecision:
    """The gate decision for answering `message` again after a skip was corrected."""
    text, truncated = bounded(message)
    return GateDecision(
        retrieve=True,
        query=memory_query(text),
        reason=RERUN_NOTE,
        method=Method.CORRECTION,
        gate=result.correction.gate,
        truncated=truncated,
        corrected_by=result.correction.id,
    )


def open_corrections(store: MemoryStore, encoder: MiniLM | None = None) -> CorrectionBook:
    """The corrections of the store's user, on the store's own Chroma client."""
    from assistant.gates.corrections.gate import GateReader
    from memory.corrections import CorrectionBook

    return CorrectionBook(store.client, store.user_id, GateReader(encoder))
