"""Corrections: recorded as the opposite decision, applied at once, kept, and undone by delete."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.gates.base import GateDecision, Method
from assistant.gates.corrections.actions import (
    can_correct,
    correct,
    open_corrections,
    rerun_decision,
)
from assistant.gates.corrections.gate import CorrectedGate, GateReader
from assistant.gates.local import shared_local_gate
from assistant.gates.registry import with_corrections
from assistant.gates.rules import always_gate, length_gate, never_gate
from memory.corrections import CorrectionBook
from memory.store import MemoryStore

SKIPPED = "What breed is Mango?"  # the local gate skips it: no word of the user's life
REWORDING = "Mango is which breed?"  # skipped too, until corrected
UNRELATED = "What is the boiling point of water at sea level?"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    """A real embedded store; closed (folder released) after the test."""
    s = MemoryStore.persistent(tmp_path / "mem", "corrector")
    yield s
    s.close()


class CountingGate:
    """A judging gate that records what it was asked (stands in for the LLM gate)."""

    name = "llm"

    def __init__(self, retrieve: bool = False) -> None:
        self.asked: list[str] = []
        self.retrieve = retrieve

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        self.asked.append(message)
        return GateDecision(self.retrieve, "", "model says so", Method.MODEL, gate=self.name)


def test_correcting_a_skip_records_retrieve_and_asks_for_a_rerun(store):
    book = open_corrections(store)
    gate = with_corrections(shared_local_gate(), book)
    before = gate.decide(SKIPPED)
    assert not before.retrieve and can_correct(before)
    result = correct(book, SKIPPED, before)
    assert result.correction.retrieve and result.rerun_with_memory
    assert result.said == "should have searched memory"
    again = rerun_decision(result, SKIPPED)
    assert again.retrieve and again.query and "re-run after your correction" in again.reason
    assert again.corrected_by == result.correction.id


def test_correcting_a_retrieve_records_skip_and_no_rerun(store):
    book = open_corrections(store)
    retrieved = GateDecision(True, "x", "user's plans", Method.LOCAL, gate="local")
    result = correct(book, "Remind me how compound interest works", retrieved)
    assert not result.correction.retrieve and not result.rerun_with_memory
    assert result.said == "didn't need memory"


@pytest.mark.parametrize(
    "decision",
    [
        GateDecision(True, "m", "gate error — failing open", Method.FAILED_OPEN),
        GateDecision(False, "", "empty message", Method.EMPTY_INPUT),
        GateDecision(True, "m", "always retrieve", Method.RULE, gate="always"),
    ],
)
def test_failed_open_empty_and_rules_have_nothing_to_correct(store, decision):
    assert not can_correct(decision)
    with pytest.raises(ValueError):
        correct(open_corrections(store), "anything", decision)
    assert open_corrections(store).count() == 0


def test_the_next_similar_message_is_decided_by_the_correction(store):
    book = open_corrections(store)
    local = shared_local_gate()
    gate = with_corrections(local, book)
    assert not local.decide(REWORDING).retrieve  # wrong before the correction
    correct(book, SKIPPED, gate.decide(SKIPPED))
    decided = gate.decide(REWORDING)
    assert decided.retrieve and decided.method is Method.CORRECTION
    assert decided.reason == f'decided by your correction: "{SKIPPED}"'
    assert decided.corrected_by is not None and decided.gate == "local"
    assert decided.query  # a retrieve has something to search for
    # An unrelated message is still the gate's own decision.
    other = gate.decide(UNRELATED)
    assert other.method is Method.LOCAL and other.corrected_by is None


def test_deleting_the_correction_restores_the_gates_own_decision(store):
    book = open_corrections(store)
    local = shared_local_gate()
    gate = with_corrections(local, book)
    own = local.decide(REWORDING)
    made = correct(book, SKIPPED, gate.decide(SKIPPED)).correction
    assert gate.decide(REWORDING).retrieve != own.retrieve
    assert book.delete(made.id) and not book.delete(made.id)
    back = gate.decide(REWORDING)
    assert (back.retrieve, back.reason, back.method) == (own.retrieve, own.reason, own.method)


def test_the_correction_survives_a_restart(tmp_path):
    first = MemoryStore.persistent(tmp_path / "mem", "restarts")
    made = open_corrections(first).add(SKIPPED, True, gate="local")
    first.close()
    second = MemoryStore.persistent(tmp_path / "mem", "restarts")
    try:
        book = open_corrections(second)
        assert [c.id for c in book.list()] == [made.id]
        assert book.get(made.id) == made
        decided = with_corrections(shared_local_gate(), book).decide(REWORDING)
        assert decided.retrieve and decided.corrected_by == made.id
    finally:
        second.close()


def test_users_do_not_share_corrections(store):
    reader = GateReader()
    mine = CorrectionBook(store.client, "corrector", reader)
    theirs = CorrectionBook(store.client, "someone-else", reader)
    mine.add(SKIPPED, True)
    assert mine.count() == 1 and theirs.count() == 0 and theirs.list() == []


def test_a_corrected_message_costs_no_model_call_in_llm_mode(store):
    book = open_corrections(store)
    llm = CountingGate(retrieve=False)
    gate = with_corrections(llm, book)
    assert isinstance(gate, CorrectedGate) and gate.name == "llm"
    correct(book, SKIPPED, gate.decide(SKIPPED))
    assert llm.asked == [SKIPPED]
    decided = gate.decide(REWORDING)
    assert decided.retrieve and decided.method is Method.CORRECTION
    assert llm.asked == [SKIPPED]  # the model was not asked again
    assert not decided.called_model and decided.model_ms == 0.0


def test_rule_modes_are_not_wrapped(store):
    book = open_corrections(store)
    for rule in (always_gate(), never_gate(), length_gate()):
        assert with_corrections(rule, book) is rule
    assert with_corrections(CountingGate(), None).name == "llm"


def test_the_message_is_embedded_once_per_decision(store, monkeypatch):
    local = shared_local_gate()
    encoder = local.encoder()
    book = open_corrections(store, encoder)
    book.add(SKIPPED, True)
    gate = with_corrections(local, book)
    gate.decide("warm the book's cache")
    runs: list[list[str]] = []
    real = encoder._encode_batch
    monkeypatch.setattr(
        encoder, "_encode_batch", lambda texts, size: runs.append(list(texts)) or real(texts, size)
    )
    encoder.clear_cache()
    decided = gate.decide("How do I reverse a list in Python?")
    assert decided.method is Method.LOCAL and len(runs) == 1


def test_elapsed_time_includes_the_lookup(store):
    ticks = iter([10.0, 10.004])  # the wrapper's clock: start, end
    book = open_corrections(store)
    book.add(SKIPPED, True)
    inner = CountingGate()
    gate = CorrectedGate(inner, book, clock=lambda: next(ticks))
    decided = gate.decide(UNRELATED)
    assert inner.asked == [UNRELATED]
    assert decided.elapsed_ms == pytest.approx(4.0)


def test_another_book_sees_a_write_within_recheck(store):
    now = [0.0]
    reader = GateReader()
    writer = CorrectionBook(store.client, "corrector", reader)
    reader_book = CorrectionBook(store.client, "corrector", reader, monotonic=lambda: now[0])
    assert reader_book.list() == []
    made = writer.add(SKIPPED, True)
    assert reader_book.list() == []  # counted less than recheck_s ago
    now[0] += 1.0
    assert [c.id for c in reader_book.list()] == [made.id]
    writer.delete(made.id)
    now[0] += 1.0
    assert reader_book.nearest(reader([REWORDING])[0]) is None


def test_correcting_the_same_message_again_replaces_it(store):
    book = open_corrections(store)
    first = book.add(SKIPPED, True)
    second = book.add(f"  {SKIPPED.upper()} ", False)
    assert first.id == second.id and book.count() == 1
    assert book.list()[0].retrieve is False
