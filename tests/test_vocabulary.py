"""The vocabulary rule: a skipped message naming what the user's memories mention retrieves."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.gate import GateDecision, Method
from assistant.vocabulary import name_like, with_vocabulary


def test_names_codes_and_definite_things_are_candidates() -> None:
    assert name_like("what breed is Mango?") == ["Mango"]
    assert name_like("which chip is on the v3 board?") == ["v3"]
    assert name_like("Why is the Q3 launch delayed?") == ["Q3"]
    assert name_like("who led the seed?") == ["seed"]
    assert name_like("What's the startup called?") == ["startup"]


@pytest.mark.parametrize(
    ("message", "not_a_candidate"),
    [
        ("Which city is the Royal Albert Hall in?", "Royal"),  # a run of capitals
        ("Who is Barack Obama?", "Obama"),
        ("What does CEO stand for?", "CEO"),  # an acronym
        ("What's the capital of France?", "capital"),  # grammar, not a thing of yours
        ("Which country is it in?", "Which"),  # capitalised to open a sentence
        (
            "Four friends ordered four pizzas for a total of 64 dollars. If two of the pizzas "
            "cost 30 dollars, how much did each of the other two cost?",
            "pizzas",
        ),  # a word problem brings its own material
    ],
)
def test_world_names_acronyms_openers_and_word_problems_are_not(
    message: str, not_a_candidate: str
) -> None:
    assert not_a_candidate not in name_like(message)


def _skip(gate: str = "local") -> GateDecision:
    return GateDecision(False, "", "general question, p=0.01", Method.LOCAL, gate=gate)


@pytest.fixture
def store(tmp_path: Path):  # noqa: ANN201
    from memory.store import MemoryStore

    store = MemoryStore.persistent(tmp_path / "mem", "vocab")
    for text in (
        "My dog Mango is a two-year-old beagle.",
        "Our startup is called Loopwise; we make soil sensors.",
        "The v3 board uses the nRF52 chip.",
        "I live in Cork with my partner Sam.",
        "Sam works as a nurse.",
        "Sam and I are going to Lisbon in May.",
    ):
        store.add(text, source="seeded")
    return store


def test_a_skip_that_names_a_remembered_thing_retrieves_and_says_why(store) -> None:
    decision = with_vocabulary(_skip(), "what breed is Mango?", store)
    assert decision.retrieve and decision.method is Method.RULE
    assert decision.reason == "mentions Mango, in your memories"
    assert decision.query == "what breed is Mango?"
    assert with_vocabulary(_skip(), "What's the startup called?", store).retrieve


def test_what_memories_do_not_mention_stays_skipped(store) -> None:
    for message in ("what breed is Rex?", "What's the capital of Peru?", "what's 2+2"):
        assert not with_vocabulary(_skip(), message, store).retrieve
    # A word most memories share says nothing about this message (max_share).
    assert store.mentions(["Sam"], max_share=0.2) == []


def test_only_a_judgement_is_overruled(store) -> None:
    never = GateDecision(False, "", "memory off", Method.RULE, gate="never")
    assert with_vocabulary(never, "what breed is Mango?", store) is never


class SkipsEverything:
    """A gate that judges every message general (as a local gate does on implicit ones)."""

    name = "local"

    def decide(self, message: str) -> GateDecision:
        return _skip()


def test_the_turn_searches_after_the_rule_and_the_reply_gets_the_memory(store) -> None:
    from assistant.offline import OfflineResponder
    from assistant.pipeline import Pipeline

    pipeline = Pipeline(gate=SkipsEverything(), store=store, responder=OfflineResponder())
    turn = pipeline.respond("what breed is Mango?")
    assert turn.decision.label == "retrieved" and turn.decision.method is Method.RULE
    assert any("beagle" in m.text for m in turn.memories)
    off = Pipeline(
        gate=SkipsEverything(), store=store, responder=OfflineResponder(), vocabulary=False
    )
    assert off.respond("what breed is Mango?").memories == ()
