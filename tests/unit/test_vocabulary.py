"""The vocabulary rule's candidates: the words of a message that may name a thing of the user's."""

from __future__ import annotations

import pytest

from assistant.gates.vocabulary import name_like


def test_names_codes_and_definite_things_are_candidates() -> None:
    assert name_like("what breed is Mango?") == ["Mango"]
    assert name_like("which chip is on the v3 board?") == ["v3"]
    assert name_like("Why is the Q3 launch delayed?") == ["Q3"]
    assert name_like("who led the seed?") == ["seed"]
    assert name_like("What's the startup called?") == ["startup"]
    # Kin typed as whose, in the user's own language: someone when the memories say so.
    assert name_like("nice, now one for amma's birthday") == ["amma"]
    # Any other word's "'s" is someone's only when the memories mention it: no role list.
    assert name_like("what time is my dentist's appointment") == ["dentist"]
    assert name_like("what's today's date and the world's tallest tree?") == []


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
