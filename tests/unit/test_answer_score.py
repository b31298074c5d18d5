"""The answer-scoring rules: each case fails when the rule it names breaks."""

from __future__ import annotations

import pytest

from assistant.eval.answer_match import contains, is_correct, last_number
from assistant.eval.answer_score import (
    MemoryTerms,
    about_you,
    boilerplate,
    damage,
    note_read_back,
    speaks_as_user,
    tokens,
)
from assistant.eval.locomo_f1 import locomo_f1, token_f1
from assistant.reply.respond import NOTHING_FOUND_NOTE, SEARCH_FAILED_NOTE

MEMORIES = [
    "I'm learning Portuguese because we're going to Porto for Kofi's 40th.",
    "My sister's wedding is in Lisbon on 14 June.",
    "I'm saving for a deposit and put away £600 every month.",
    "I take levothyroxine every morning for an underactive thyroid.",
    "We do the pub quiz at The Crown & Kettle every other Thursday.",
    "I play netball at the Hough End leisure centre.",
]
# A small stand-in for MiniLM's vocabulary, so each case shows exactly which rule fires.
COMMON = frozenset(
    "learning because going sister wedding saving deposit every month take morning thyroid "
    "underactive pub quiz crown kettle end play netball leisure centre capital portugal "
    "city largest second the war".split()
)


@pytest.fixture(scope="module")
def terms() -> MemoryTerms:
    return MemoryTerms.of(MEMORIES, vocabulary=COMMON)


# ---- correct ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "answer", "expected"),
    [
        ("The capital is LISBON.", "Lisbon", True),  # case
        ("Your specialist is Dr. Mereana Tūhoe.", "Tuhoe", True),  # accents, reply side
        ("Dr Tuhoe", "Tūhoe", True),  # accents, answer side
        ("The Velvet\n  Tramlines", "Velvet Tramlines", True),  # whitespace
        ("That's 1,200 metres.", "1200", True),  # thousands separator in the reply
        ("That's 1200 metres.", "1,200", True),  # ... and in the answer
        ("It comes to 5 000 000.", "5000000", False),  # spaces are not separators
        ("It is 14.", "4", False),  # token boundary: no "4" inside "14"
        ("It is 4.5.", "4", False),  # nor inside a decimal
        ("It is 4.", "4", True),  # a full stop after a number is no decimal
        ("About 26.2 miles.", "26.2", True),
        ("It's on 17 April at 4:15pm.", "4:15", True),  # a clock's pm stands apart
        ("Doors at 7:30 PM.", "7:30", True),
        ("It starts at 4:15pm.", "4:45", False),
        ("The table is at 8:00 PM.", "8pm", True),  # a whole hour, minutes written
        ("The table is at 8pm.", "8:00 pm", True),
        ("Doors at 9:00 AM.", "9:00", True),
        ("The table is at 8:00 PM.", "18pm", False),
        ("The table is at 18:00.", "8pm", False),
        ("The mains is 230V.", "230", True),  # a unit stands apart
        ("Fire the glaze at 1240C.", "1240", True),
        ("It's in ward 7B.", "7", False),  # a label is no unit
        ("Linda is allergic to walnuts.", "walnut", True),  # a plural is its word
        ("She lives in Paris.", "Pari", False),
        ("A pane of glass.", "glas", False),
        ("She's in at 3:45 PM on Tuesday.", "3.45pm", True),  # a colon or a dot
        ("She's in at 3:45 PM.", "3.50", False),
        ("Chloé walks on Tuesdays and Fridays.", "Tue", True),  # a weekday's three letters
        ("Due 1 Sept.", "1 September", True),
        ("Due 1 Sept.", "1 Oct", False),
        ("The MOT is due on September 30th.", "30 Sept", True),  # month first, day first
        ("That's Thursday, May 23, 2026.", "23 May", True),
        ("Due 30 September.", "September 30", True),
        ("Due 30 September.", "September 3", False),
        ("The service is on Thu 17 Jul 8am.", "8am", True),  # a day already, then a clock
        ("About 26.2 miles.", "26", False),
        ("We meet at the Crown and Kettle.", "Crown & Kettle", True),  # & reads as and
        ("Plot 31, by the water butts", "31", True),
        ("Kofi's band", "Kofi", True),  # possessive
        ("a data-sharing agreement", "data sharing", True),  # hyphen separates
        ("Velvet", "Velvet Tramlines", False),  # every answer token, adjacent
        ("Tramlines Velvet", "Velvet Tramlines", False),  # in order
        ("Tuesdays and Fridays.", "Tuesday", True),  # a weekday in the plural
        ("On Tuesday.", "Tuesdays", True),
        ("Tuesdays.", "Thursday", False),
        ("It's on May 12th.", "May 12", True),  # an ordinal is its number
        ("It's on the 12th of May.", "12 May", False),  # "of" still stands between
        ("It's on May 12.", "May 12th", True),
        ("It's on May 21st.", "May 2", False),
    ],
)
def test_contains(reply: str, answer: str, expected: bool) -> None:
    assert contains(reply, answer) is expected


def test_correct_takes_any_answer_and_no_answer_is_wrong() -> None:
    assert is_correct("On the 3rd of August.", ["3 August", "3rd of August"])
    assert not is_correct("In August.", ["3 August", "August 3"])
    assert not is_correct("", ["x"])
    assert not is_correct("anything", [])
    assert is_correct("The table is at 8:00 PM.", ["8pm"])  # as `contains` reads it


def test_last_number_rule_reads_the_last_number_only() -> None:
    worked = "He runs 3 x 3 = 9 sprints of 60 m, so 9 x 60 = 540 metres a week."
    assert is_correct(worked, ["540"], match="last_number")
    assert not is_correct(worked, ["60"], match="last_number")  # contained, but not last
    assert is_correct("That is 1,080 dollars.", ["1080"], match="last_number")
    assert is_correct("It costs $18.00 in total", ["18"], match="last_number")
    assert last_number("no digits here") is None
    with pytest.raises(ValueError):
        is_correct("x", ["x"], match="regex")


# ---- damaged -------------------------------------------------------------------------------


def test_terms_are_names_numbers_rare_words_and_phrases(terms: MemoryTerms) -> None:
    assert terms.terms["porto"] == "name"
    assert terms.terms["kofi"] == "name"
    assert terms.terms["600"] == "number"
    assert terms.terms["40th"] == "number"
    assert terms.terms["levothyroxine"] == "rare"
    assert "thyroid" not in terms.terms  # a common lower-case word
    assert "thursday" not in terms.terms  # generic: days, months
    assert "the" not in terms.terms and "i" not in terms.terms  # stopwords
    assert "14" in terms.terms and "6" not in terms.terms  # single digits are everywhere
    assert ("put", "away", "600", "every") in terms.phrases


def test_an_answer_that_sits_in_a_memory_is_no_leak(terms: MemoryTerms) -> None:
    # The bait: the capital of Portugal is Lisbon, and a memory says Lisbon too.
    result = damage("The capital of Portugal is Lisbon.", "What's the capital of Portugal?",
                    ["Lisbon"], terms)  # fmt: skip
    assert not result.damaged


def test_a_memory_name_in_a_general_reply_is_a_leak(terms: MemoryTerms) -> None:
    reply = "The capital of Portugal is Lisbon. Enjoy your trip to Porto for Kofi's birthday!"
    result = damage(reply, "What's the capital of Portugal?", ["Lisbon"], terms)
    assert result.damaged
    assert result.terms == ("kofi", "porto")


def test_what_the_never_mode_said_is_world_knowledge(terms: MemoryTerms) -> None:
    reply = "Lisbon is the capital; Porto is the second city."
    never = "Lisbon. Porto is the second-largest city."
    question = "What's the capital of Portugal?"
    assert damage(reply, question, ["Lisbon"], terms).terms == ("porto",)
    assert not damage(reply, question, ["Lisbon"], terms, world=never).damaged


def test_question_words_are_no_leak(terms: MemoryTerms) -> None:
    # "levothyroxine" is in a memory, but the question asked about it.
    result = damage("Levothyroxine treats an underactive thyroid.", "What is levothyroxine for?",
                    ["thyroid"], terms)  # fmt: skip
    assert not result.damaged


def test_a_memory_number_and_a_rare_word_leak(terms: MemoryTerms) -> None:
    assert damage("15% of 200 is 30, and you save 600 a month.", "What is 15% of 200?",
                  ["30"], terms).terms == ("600",)  # fmt: skip
    assert damage("Gold is Au. Don't forget your levothyroxine!", "Chemical symbol for gold?",
                  ["Au"], terms).terms == ("levothyroxine",)  # fmt: skip


def test_a_single_digit_is_no_leak(terms: MemoryTerms) -> None:
    assert not damage("A hexagon has 6 sides.", "How many sides has a hexagon?", ["six", "6"],
                      MemoryTerms.of(["I have 6 cats"], vocabulary=COMMON)).damaged  # fmt: skip


def test_a_common_word_counts_as_a_name_only_when_capitalised(terms: MemoryTerms) -> None:
    question = "When did the war end?"
    assert not damage("At the end of 1945 the crown was safe.", "Which year?", ["1945"],
                      terms).damaged  # fmt: skip
    assert damage("In 1945. Then off to the Crown for the quiz!", question, ["1945"],
                  terms).terms == ("crown",)  # fmt: skip


def test_a_repeated_memory_phrase_is_a_leak() -> None:
    terms = MemoryTerms.of(["we keep the spare key under the blue flowerpot"], vocabulary=COMMON)
    reply = "Keys: most people keep the spare key under the doormat."
    result = damage(reply, "Where do people hide keys?", ["doormat"], terms)
    assert result.phrases == ("keep the spare key", "the spare key under", "spare key under the")
    assert not damage("Keys go in a safe.", "Where?", ["safe"], terms).damaged


@pytest.mark.parametrize(
    "reply",
    [
        "According to your long-term memory, the capital is Lisbon.",
        "Based on the notes retrieved from your memory for this message, it is 4.",
        "The user asked about Lisbon, which is the capital.",
        "I apologize, but there is no information provided in the memory system.",
        "Based on the information you provided, 2 + 2 = 4.",
    ],
)
def test_boilerplate_about_memory_is_damage_and_counted(reply: str, terms: MemoryTerms) -> None:
    assert boilerplate(reply)
    assert damage(reply, "q", ["Lisbon", "4"], terms).damaged


@pytest.mark.parametrize(
    "reply",
    [
        "The capital of Portugal is Lisbon.",
        "Memory in computing is where a program keeps its data.",  # not the user's memory
        "Write it down in a notebook.",
        "Users of the metro pay by card.",
        "In music, C, E and G make a chord.",
    ],
)
def test_ordinary_replies_are_no_boilerplate(reply: str) -> None:
    assert boilerplate(reply) == ()


def test_knowing_nothing_about_you_is_damage(terms: MemoryTerms) -> None:
    reply = "I don't have any personal information about you, but 15 x 12 = 180."
    assert about_you(reply)
    assert damage(reply, "What's 15 times 12?", ["180"], terms).about_you
    assert not about_you("I don't know the answer to that.")


# ---- the empty-search note read back -------------------------------------------------------


@pytest.mark.parametrize("note", [NOTHING_FOUND_NOTE, SEARCH_FAILED_NOTE])
def test_the_notes_themselves_are_read_back(note: str) -> None:
    # If the notes' wording changes, these patterns must follow it.
    assert len(note_read_back(note)) >= 3


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # the note read back to the audience, as seen in the browser (issue 28)
        (
            "I don't have any saved information about you for this message. If it asks "
            "about my own life, I don't know that yet.",
            ("saved information", "for this message", "my own life"),
        ),
        (
            "You have nothing saved about me for this message.",
            ("nothing saved", "for this message"),
        ),
        ("I have nothing saved about you yet, sorry!", ("nothing saved",)),
        ("I don't have anything saved about Mom's birthday.", ("nothing saved",)),
        ("Since this message asks about your own life, I don't know.", ("my own life",)),
        ("What you told me before can't be looked up right now.", ("can't be looked up",)),
        ("Canberra. For anything else, just answer!", ("just answer",)),
        ("Say you don't know that yet. The wedding is soon.", ("the note's instruction",)),
    ],
)
def test_the_notes_wording_in_a_reply_is_counted(reply: str, expected: tuple[str, ...]) -> None:
    assert note_read_back(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        # honest don't-knows: what the note asks the model to say, in its own words
        "I don't know when your dentist appointment is.",
        "I don't know that yet.",
        "I don't know that yet. Tell me and I'll keep it in mind!",
        "I can't check that right now, sorry.",
        "You haven't told me where the wedding is.",
        "I'm not sure which band you like best.",
        # ordinary replies that share a word with the note
        "Thanks for this message, Sam! See you Thursday.",  # a drafted reply
        "Think about your own life goals before you decide.",
        "Nothing saved the Titanic once it hit the iceberg.",
        "The firefighters saved about 20 people.",
        "Just answer the first question and skip the rest.",
    ],
)
def test_honest_and_ordinary_replies_are_no_note(reply: str) -> None:
    assert note_read_back(reply) == ()


def test_the_questions_own_words_are_no_note(terms: MemoryTerms) -> None:
    question = "Where is saved data kept on a PS5?"
    reply = "Saved data is kept in the console's storage."
    assert note_read_back(reply) == ("saved information",)
    assert note_read_back(reply, question) == ()
    assert not damage(reply, question, ["storage"], terms).damaged


def test_a_general_reply_that_reads_the_note_back_is_damaged(terms: MemoryTerms) -> None:
    reply = "I have nothing saved about you for this message, but 2 + 2 = 4."
    result = damage(reply, "What's 2+2?", ["4"], terms)
    assert result.note == ("nothing saved", "for this message") and result.damaged


@pytest.mark.parametrize(
    ("reply", "question", "expected"),
    [
        ("My brother Declan lives in Cork.", "Where does my brother live?", True),
        ("Your brother lives in Cork.", "Where does my brother live?", False),
        ("I am allergic to penicillin.", "Which antibiotic am I allergic to?", True),
        ("You're allergic to penicillin.", "Which antibiotic am I allergic to?", False),
        ("I usually work Mondays.", "Which nights do I usually work?", True),
        ("I'm not sure which nights you work.", "Which nights do I usually work?", False),
        ("My guess is Lisbon.", "What is the capital of Portugal?", False),  # no 'my' asked
    ],
)
def test_speaks_as_user(reply: str, question: str, expected: bool) -> None:
    assert speaks_as_user(reply, question) is expected


# ---- LoCoMo's token F1 ---------------------------------------------------------------------


def test_token_f1_normalises_like_locomo() -> None:
    assert token_f1("The 7 May, 2023!", "7 May 2023") == 1.0
    assert token_f1("an apple and a pear", "apple pear") == 1.0
    assert token_f1("", "x") == 0.0
    # 2 of 4 predicted tokens are right, 2 of 2 gold: P 0.5, R 1.0
    assert token_f1("she went to Paris", "went Paris") == pytest.approx(2 / 3)


def test_locomo_categories() -> None:
    # multi-hop: each gold part takes its best prediction part, averaged
    assert locomo_f1("pottery, camping", "pottery, camping, painting", 1) == pytest.approx(2 / 3)
    # open-domain: only the gold before the first ';' counts
    assert locomo_f1("psychology", "psychology; counseling", 3) == 1.0
    assert locomo_f1("2022", 2022, 2) == 1.0


def test_tokens_keep_decimals_and_split_the_rest() -> None:
    assert tokens("£2.4M, led by Fieldstone.") == ["2.4", "m", "led", "by", "fieldstone"]
