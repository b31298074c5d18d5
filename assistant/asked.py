"""What kind of answer a follow-up asks for (a time, a day, an amount), and which facts hold one.

Word rules only, no model call: "how much was the quote?" asks for an amount, and
"Home insurance renewal 5 Jan, Aviva quote £214" holds one.
"""

from __future__ import annotations

import re
from enum import Enum

from memory.tokens import tokenize

# What a follow-up asks for, not what it is about: "physio for my shoulder? what time"
# shares "time" with "part time as a barista", and "every" joins any two routines; "In
# which town?" names no town.
ASKED_FOR = frozenset(
    """time times day days date week weeks month months year years long much many often
    every right soon next last first town city place country area exactly per""".split()
)

ASKED_TERMS = frozenset(tokenize(" ".join(ASKED_FOR)))

# Question words alone, typos included: "were?" is a fast "where?".
QUESTION_WORDS = frozenset(
    "where were wher when wen whn why how who what wat wot which whose".split()
)
QUESTION_TERMS = frozenset(tokenize(" ".join(QUESTION_WORDS)))


class Kind(Enum):
    """The shape of the answer a question asks for."""

    TIME = "time"
    DAY = "day"
    AMOUNT = "amount"


# "when" asks for a day or a time: either one answers it.
_ASKS: tuple[tuple[re.Pattern[str], frozenset[Kind]], ...] = (
    (
        re.compile(
            r"\b(?:what|which) time\b|\bwhat hour\b|\bhow (?:early|late)\b"
            r"|\b(?:starts?|leaves?|departs?|arrives?|lands?|opens?|closes?) at\b"
            r"|\bwhat time['’]?s\b",
            re.IGNORECASE,
        ),
        frozenset({Kind.TIME}),
    ),
    (
        re.compile(
            r"\b(?:what|which) (?:day|date|days|dates)\b|\bwhen\b|\bwhens\b|\bdate\b",
            re.IGNORECASE,
        ),
        frozenset({Kind.DAY, Kind.TIME}),
    ),
    (
        re.compile(
            r"\bhow much\b|\bhow many (?:euros|dollars|pounds|quid|bucks)\b"
            r"|\b(?:cost|costs|price|fee|charge)\b",
            re.IGNORECASE,
        ),
        frozenset({Kind.AMOUNT}),
    ),
)

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DAYS = r"mon|tues?|wed|weds|thu|thurs?|fri|sat|sun"
_HOLDS: dict[Kind, re.Pattern[str]] = {
    # "7:30", "2.15pm", "9am", "15h", "16h30", "noon".
    Kind.TIME: re.compile(
        r"\b\d{1,2}(?:[:.]\d{2}\s?(?:am|pm)?|\s?(?:am|pm)|h\d{0,2})\b|\b(?:noon|midday|midnight)\b",
        re.IGNORECASE,
    ),
    # "5 Jan", "March 3", "the 3rd", "12/09", a weekday ("Thurs", "sundays").
    Kind.DAY: re.compile(
        rf"\b(?:{_MONTHS})\b|\b\d{{1,2}}(?:st|nd|rd|th)\b|\b\d{{1,2}}/\d{{1,2}}\b"
        rf"|\b(?:{_DAYS})(?:day)?s?\b|\b(?:monday|tuesday|wednesday|thursday|friday"
        r"|saturday|sunday)s?\b",
        re.IGNORECASE,
    ),
    # "£214", "$1,420", "540 (my part)", "13.33", "30 euros", "€16/h".
    Kind.AMOUNT: re.compile(
        r"[£$€¥₹]\s?\d|\b\d[\d,]*(?:\.\d{2})?\s?(?:€|eur|euros?|dollars?|bucks|quid|pounds?"
        r"|usd|cad|aud|gbp|k)\b|\b\d+[.,]\d{2}\b|\b\d{2,}\b",
        re.IGNORECASE,
    ),
}


def asked_kinds(message: str) -> frozenset[Kind]:
    """The kinds of answer a message asks for; empty when it asks for none of these."""
    for pattern, these in _ASKS:
        if pattern.search(message):
            # The first that matches: "what time is the party on?" asks a time, not a day.
            return these
    return frozenset()


def holds(text: str, kinds: frozenset[Kind]) -> bool:
    """True when the text holds an answer of one of these kinds."""
    return any(_HOLDS[kind].search(text) for kind in kinds)
