"""The vocabulary rule: a skipped message naming what the user's memories mention retrieves."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.gates.base import GateDecision, Method
from assistant.gates.vocabulary import with_vocabulary
from tests.stores import seeded_store


def _skip(gate: str = "local") -> GateDecision:
    return GateDecision(False, "", "general question, p=0.01", Method.LOCAL, gate=gate)


@pytest.fixture
def store(tmp_path: Path):  # noqa: ANN201
    return seeded_store(
        tmp_path / "mem",
        "vocab",
        "My dog Mango is a two-year-old beagle.",
        "Our startup is called Loopwise; we make soil sensors.",
        "The v3 board uses the nRF52 chip.",
        "I live in Cork with my partner Sam.",
        "Sam works as a nurse.",
        "Sam and I are going to Lisbon in May.",
    )


def test_a_skip_that_names_a_remembered_thing_retrieves_and_says_why(store) -> None:
    decision = with_vocabulary(_skip(), "what breed is Mango?", store)
    assert decision.retrieve and decision.method is Method.VOCABULARY
    assert decision.reason == "mentions Mango, in your memories"
    assert decision.query == "what breed is Mango?"
    assert with_vocabulary(_skip(), "What's the startup called?", store).retrieve


def test_a_name_typed_in_lower_case_is_known_by_what_it_owns(store) -> None:
    # Baker set, read after scoring: "where's tomás's futsal" was skipped, and its "what
    # time" follow-up then continued a general question.
    assert with_vocabulary(_skip(), "where's mango's vet?", store).retrieve
    # Whose "'s" is grammar, kin or time is no name, and an unknown one stays skipped.
    for message in ("what's today's date?", "when's my mum's birthday?", "where's rex's lead?"):
        assert not with_vocabulary(_skip(), message, store).retrieve


def test_what_memories_do_not_mention_stays_skipped(store) -> None:
    for message in ("what breed is Rex?", "What's the capital of Peru?", "what's 2+2"):
        assert not with_vocabulary(_skip(), message, store).retrieve
    # A word most memories share says nothing about this message (max_share).
    assert store.mentions(["Sam"], max_share=0.2) == []


def test_only_a_judgement_is_overruled(store) -> None:
    never = GateDecision(False, "", "memory off", Method.RULE, gate="never")
    assert with_vocabulary(never, "what breed is Mango?", store) is never
    # The user's own word on a message is never turned over either.
    corrected = GateDecision(False, "", "decided by your correction", Method.CORRECTION)
    assert with_vocabulary(corrected, "what breed is Mango?", store) is corrected


class SkipsEverything:
    """A gate that judges every message general (as a local gate does on implicit ones)."""

    name = "local"

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        return _skip()


def test_the_turn_searches_after_the_rule_and_the_reply_gets_the_memory(store) -> None:
    from assistant.reply.offline import OfflineResponder
    from assistant.turn.pipeline import Pipeline

    pipeline = Pipeline(gate=SkipsEverything(), store=store, responder=OfflineResponder())
    turn = pipeline.respond("what breed is Mango?")
    assert turn.decision.label == "retrieved" and turn.decision.method is Method.VOCABULARY
    assert any("beagle" in m.text for m in turn.memories)
    off = Pipeline(
        gate=SkipsEverything(), store=store, responder=OfflineResponder(), vocabulary=False
    )
    assert off.respond("what breed is Mango?").memories == ()


# ---- the rule's decisions are corrected like the gate's (issue 29) ---------------------

CORK = "Which country is Cork in?"  # the rule's bait: general, but this user lives in Cork
CORK_REWORDING = "What country is Cork in?"  # MiniLM cosine 0.993 with CORK


def test_a_rule_decision_can_be_corrected_and_the_rule_modes_cannot(store) -> None:
    from assistant.gates.corrections.actions import can_correct

    decision = with_vocabulary(_skip(), CORK, store)
    assert decision.retrieve and decision.method is Method.VOCABULARY
    assert decision.reason == "mentions Cork, in your memories" and decision.gate == "local"
    assert can_correct(decision)
    always = GateDecision(True, CORK, "always retrieve", Method.RULE, gate="always")
    assert not can_correct(always)


def _corrected_pipeline(store):  # noqa: ANN001, ANN202
    from assistant.gates.corrections.actions import open_corrections
    from assistant.gates.corrections.gate import CorrectedGate
    from assistant.reply.offline import OfflineResponder
    from assistant.turn.pipeline import Pipeline

    book = open_corrections(store)
    gate = CorrectedGate(SkipsEverything(), book)
    return Pipeline(gate=gate, store=store, responder=OfflineResponder()), book


def test_a_corrected_rule_decision_decides_rewordings_and_survives_a_restart(
    store, tmp_path: Path
) -> None:
    from assistant.gates.corrections.actions import correct
    from memory.store import MemoryStore

    pipeline, book = _corrected_pipeline(store)
    first = pipeline.respond(CORK)
    assert first.decision.method is Method.VOCABULARY and first.memories
    result = correct(book, CORK, first.decision)
    assert not result.correction.retrieve and not result.rerun_with_memory
    assert result.correction.reason == "mentions Cork, in your memories"

    # The correction decides the rewording, and the rule, which would retrieve it, does not
    # turn it back: no search, no memories.
    assert with_vocabulary(_skip(), CORK_REWORDING, store).retrieve
    again = pipeline.respond(CORK_REWORDING)
    assert not again.searched and again.memories == ()
    assert again.decision.method is Method.CORRECTION
    assert again.decision.reason == f'decided by your correction: "{CORK}"'
    assert again.decision.corrected_by == result.correction.id

    store.close()  # a restart: a new store and a new book on the same folder
    reopened = MemoryStore.persistent(tmp_path / "mem", "vocab")
    try:
        after = _corrected_pipeline(reopened)[0].respond(CORK_REWORDING)
        assert not after.searched and after.decision.corrected_by == result.correction.id
    finally:
        reopened.close()
