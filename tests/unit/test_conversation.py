"""What a message reads as after the last exchanges (assistant/conversation/reading.py)."""

from __future__ import annotations

import pytest

from assistant.conversation.reading import READING_WORDS, leans, read
from assistant.conversation.said import RECENT_TURNS, Said
from assistant.conversation.search import fused, reply_used
from memory.records import Memory

SEARCHED = Said("When am I meeting Alex?", "Thursday.", query="When am I meeting Alex?")
GENERAL = Said("What's the capital of Scotland?", "Edinburgh.")


@pytest.mark.parametrize(
    "message",
    [
        "When's her birthday?",  # a pronoun
        "how much did i lend him?",
        "is it still tuesdays at 6?",
        "what's the address there?",  # a deictic
        "And when is it?",
        "and of Wales?",  # carries on
        "what about the kids?",
        "What time?",  # a short question with no verb of its own
        "which doctor?",
        "magkano?",  # in any language: the shape, not the words
    ],
)
def test_a_message_that_points_back_carries_on_or_is_a_fragment_leans(message: str) -> None:
    assert leans(message)


@pytest.mark.parametrize(
    "message",
    [
        "Plan my weekend",  # a request, not a question
        "What's 2+2?",  # a short question with a verb of its own
        "who is Noor?",
        "What's the capital of Australia?",
        "Tell me a joke",
        "",
    ],
)
def test_a_message_with_its_own_subject_stands_alone(message: str) -> None:
    assert not leans(message)


def test_with_no_earlier_exchange_nothing_is_a_follow_up() -> None:
    reading = read("When's her birthday?", [])
    assert not reading.follow_up and reading.query == "When's her birthday?"
    assert reading.source == "" and reading.others == ()


def test_a_message_that_stands_alone_is_searched_as_itself_with_the_conversation_behind() -> None:
    reading = read("Plan my weekend", [SEARCHED])
    assert not reading.follow_up and reading.query == "Plan my weekend" and not reading.source
    # What the conversation was on only fills in behind its own search.
    assert reading.others == ("When am I meeting Alex? Plan my weekend",)


def test_a_follow_up_is_read_joined_after_the_exchange_it_continues() -> None:
    reading = read("What time?", [SEARCHED])
    assert reading.follow_up and reading.back == 1 and reading.continued is SEARCHED
    assert reading.query == "When am I meeting Alex? What time?"
    assert reading.source == "from your last message"
    # It leans, so the message alone is no reading of it: "What time?" alone finds bedtime.
    assert "What time?" not in reading.others


def test_a_follow_up_past_a_general_aside_continues_the_searched_exchange() -> None:
    reading = read("what time again?", [SEARCHED, GENERAL])
    assert reading.back == 2 and reading.continued is SEARCHED
    assert "Alex" in reading.query and reading.source == "from earlier in this chat"
    # The aside's reading is searched too, and none twice.
    assert any("Scotland" in o for o in reading.others)
    assert len(set(reading.others)) == len(reading.others) and reading.query not in reading.others


def test_a_follow_up_of_general_exchanges_only_continues_the_last() -> None:
    older = Said("Who wrote Jane Eyre?", "Charlotte Brontë.")
    reading = read("and when was she born?", [older, GENERAL])
    assert reading.back == 1 and reading.continued is GENERAL


def test_only_the_last_exchanges_are_read_and_a_chain_stays_bounded() -> None:
    said = [Said(f"question {i} " + "word " * 40, query=f"q{i} " + "word " * 40) for i in range(6)]
    reading = read("and then?", said)
    assert len(reading.others) <= RECENT_TURNS + 1
    assert not any("question 0" in o for o in (reading.query, *reading.others))
    assert all(len(o.split()) <= READING_WORDS for o in (reading.query, *reading.others))


def _memories(*ids: str) -> tuple[Memory, ...]:
    return tuple(Memory(i, f"note {i}", 0.5, "", "test") for i in ids)


def test_fusion_keeps_what_the_readings_agree_on_first_and_the_weighted_ranking_wins_ties() -> None:
    query, other = _memories("a", "b", "c"), _memories("c", "d")
    ids = [m.id for m in fused([(2.0, query), (1.0, other)])]
    assert ids[0] == "a" and set(ids) == {"a", "b", "c", "d"}
    # A note only another reading found still makes the list, below what both found.
    assert ids.index("c") < ids.index("d")


def test_the_memories_a_reply_used_are_those_sharing_most_of_its_words() -> None:
    notes = ["Dinner with Alex at Nopa, Thursday 7:30pm", "Dentist on Friday at 9am"]
    assert reply_used(notes, "Thursday at 7:30pm, at Nopa.", "When am I meeting Alex?") == (
        notes[0],
    )
    assert reply_used(notes, "I don't know.", "When am I meeting Alex?") == ()
