"""Asides: a general question between a memory turn and the follow-up that goes back to it.

"when's my cataract check?", then "btw how many ml in a pint", then "where is it again?":
the last asks about the check-up, not the pint. The follow-up resolver
(assistant/followup.py) reads here which exchange is an aside and what goes back past it.
Word rules and the local gate's reading of a message alone, no model call.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assistant.asked import ASKED_TERMS, QUESTION_TERMS
from assistant.gates.base import Said
from assistant.people import content_words, words
from assistant.referents import ONE_PERSON, pointing, referent_person
from assistant.ruled import ruled_out
from memory.tokens import tokenize

# How surely a message read alone asks about the user's life (the local gate's p), if known.
Personal = Callable[[str], float] | None

# Past a general aside, a question read alone at this or more goes back to the memory turn:
# "whats the confirmation number for it?" read 0.997 and "what dose was it?" 0.987, where
# "and how high is it?" read 0.29 and "and where's it hanging now?" (Guernica) 0.87.
SURELY_PERSONAL = 0.9
# An exchange searched with its own words that read alone below this is an aside all the
# same: the local gate retrieves from about 0.13 so as to miss nothing, and searched "btw
# how many ml in a pint" (0.16), so "where is it again?" went on about the pint, not the
# cataract check before it. Memory questions read alone at 0.9 and more, mostly.
READS_GENERAL = 0.3


# "btw how many mg in a gram", "random q: …", "unrelated but …": the user says it is a
# digression. Every such middle turn of the 64 spent sets' three-turn rows was one.
_DIGRESSION = re.compile(
    r"^\W*(?:(?:ok|oh|also|and|so)\W+)?(?:btw|by the way|random(?:\s+q(?:uestion)?)?"
    r"|quick (?:one|q(?:uestion)?)|unrelated|off[- ]topic|side ?note|on another note"
    r"|totally different|different question)\b",
    re.IGNORECASE,
)
# Past a digression, a follow-up read alone at this or more goes back to the memory turn:
# "and what do i need to bring to it?" read 0.21 and "what time does it start?" 0.27,
# where "and when was it published?" (after "btw who wrote jane eyre") read 0.00.
READS_PERSONAL_ENOUGH = 0.1


def digressed(said: Said) -> bool:
    """True for an exchange the user opened as a digression: "btw how many mg in a gram"."""
    return bool(_DIGRESSION.match(said.user))


def back_past_digression(message: str, said: Said, personal: Personal) -> bool:
    """True when a follow-up past a digression goes back: it may be about the user's life.

    "when's my cardiologist appt?", "btw how many mg in a gram", "and what do i have to
    bring?": the aside was said to be one, and its reply gives "it" nothing to be.
    """
    return digressed(said) and personal is not None and personal(message) >= READS_PERSONAL_ENOUGH


def surely_personal(message: str, personal: Personal) -> bool:
    """True when the local gate, reading the message alone, is sure it asks about the user."""
    return personal is not None and personal(message) >= SURELY_PERSONAL


def is_aside(said: Said, personal: Personal) -> bool:
    """True for an exchange that did not search, or searched a general question of its own.

    Of its own: searched with its own words, read by the local gate below `READS_GENERAL`,
    and ruling nothing out: "the TT-Line one, not the P&O" after "i have two ferries next
    week" reads 0.03 alone, and chooses between the ferries.
    """
    if not said.query:
        return True
    if personal is None or not set(tokenize(said.query)) <= set(tokenize(said.user)):
        return False
    return not ruled_out(said.user) and personal(said.user) < READS_GENERAL


def back_on(message: str, topic: Said, aside: Said) -> bool:
    """True when a follow-up past a general aside speaks of the memory exchange before it.

    "what dose was it?" after the blood-pressure pill and "whats the capital of canada"
    names the pill's dose, a word of that exchange and not of the aside; "wait what cant
    she have?" after Mochi's food and "how long do rabbits live" has a "she" that only the
    memory exchange gives anyone to be. "and how high is it?" after "what's the tallest
    mountain in Africa?" stays with the aside.
    """
    own = set(tokenize(" ".join(content_words(message)))) - ASKED_TERMS - QUESTION_TERMS
    if own & set(tokenize(topic.everything())) and not own & set(tokenize(aside.everything())):
        return True
    told = {w.casefold() for w in words(message)}
    return bool(
        pointing(told) & ONE_PERSON and not referent_person([aside]) and referent_person([topic])
    )
