"""The offline responder: memories quoted, arithmetic computed, the rest honestly declined."""

from __future__ import annotations

import pytest

from assistant.reply.offline import (
    NEEDS_A_MODEL,
    NOTHING_FOUND,
    SEARCH_FAILED,
    OfflineResponder,
    answer_arithmetic,
)
from assistant.reply.respond import Lookup
from memory.records import Memory


def memory(text: str, similarity: float = 0.8) -> Memory:
    return Memory(id=text[:8], text=text, similarity=similarity, created_at="", source="seeded")


def test_retrieved_turn_quotes_the_most_relevant_memories():
    memories = [memory(f"note {i}") for i in range(5)]
    reply = OfflineResponder().reply("what are my notes?", memories, [], lookup=Lookup.SEARCHED)
    assert reply.text.startswith("From your memories:")
    assert [line for line in reply.text.splitlines() if line.startswith("> ")] == [
        "> note 0",
        "> note 1",
        "> note 2",
    ]
    assert reply.source == "offline" and reply.error is None


def test_searched_but_nothing_found_says_so():
    assert OfflineResponder().compose("when is my flight?", [], Lookup.SEARCHED) == NOTHING_FOUND


def test_a_failed_search_is_not_passed_off_as_nothing_found():
    assert OfflineResponder().compose("when is my flight?", [], Lookup.FAILED) == SEARCH_FAILED


def test_general_question_says_a_model_is_needed_and_how():
    text = OfflineResponder().compose("what is the capital of France?", [])
    assert text == NEEDS_A_MODEL
    assert "ANTHROPIC_API_KEY" in text and "ANTHROPIC_BASE_URL" in text


def test_arithmetic_wins_over_memories_and_streams_once():
    pieces: list[str] = []
    reply = OfflineResponder().reply("what's 2+2?", [memory("x")], [], on_text=pieces.append)
    assert reply.text == pieces[0] == "2+2 = 4"


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        ("what's 2+2?", "2+2 = 4"),
        ("What is 15% of 80?", "15% of 80 = 12"),
        ("calculate (3 * 4) ^ 2", "(3 * 4) ^ 2 = 144"),
        ("12 x 7", "12 x 7 = 84"),
        ("what is 1,000 * 3", "1,000 * 3 = 3000"),
        ("10 / 4", "10 / 4 = 2.5"),
        ("1/0", "I can't compute that offline: division by zero."),
        ("0." + "0" * 180 + "1 ^ -2", "I can't compute that offline: the result is too large."),
        ("tell me a joke", None),
        ("2024", None),
        ("10.5-2.25", "10.5-2.25 = 8.25"),
        ("2*3-4-5", "2*3-4-5 = -3"),
        ("what is 2024 - 1990?", "2024 - 1990 = 34"),
    ],
)
def test_arithmetic_answers(message, answer):
    assert answer_arithmetic(message) == answer


@pytest.mark.parametrize(
    "message",
    [
        "2024-12-25",  # dates
        "what is 2024-12-25?",
        "12/25/2024",
        "25.12.2024",
        "10:30",  # times
        "9:30-10:00",
        "555-1234",  # phone numbers
        "(555) 123-4567",
        "1-800-555-0199",
        "+1 617 555 0100",
        "1.2.3",  # versions
        "192.168.0.1",
        "123-45-6789",  # ids
        "007-12",
    ],
)
def test_dates_times_phone_numbers_versions_and_ids_are_not_arithmetic(message):
    # They reach the memories or the "needs a model" reply, never "2024-12-25 = 1987".
    assert answer_arithmetic(message) is None
    assert OfflineResponder().compose(message, []) == NEEDS_A_MODEL
    assert OfflineResponder().compose(message, [memory("Xmas at Mum's")]).startswith("From your")
