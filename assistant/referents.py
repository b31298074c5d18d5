"""Who a follow-up is about: the person a "she" or "their" points at, and whom it asks about.

"When's her birthday?" after "I need a gift idea for Mom" is about Mom; "how long has she
been with us?" after "who is the head nurse" is about the nurse the reply named. Word rules
over the last exchanges, as in the resolver (assistant/followup.py) that reads them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.gates.base import Said
from assistant.people import (
    FUNCTION_WORDS,
    ROLES,
    SELF,
    about_person,
    is_name,
    names_in,
    one_person,
    person_in,
    typed_name,
    words,
)
from memory.tokens import tokenize

# "who is the head nurse", "whos our vet again": the answer names the person.
_WHO = re.compile(r"^\W*(?:who|whos|who['’]s)\b", re.IGNORECASE)


def _answer_names(said: Said) -> str:
    """The person a "who …?" exchange named, asked for by role: in its reply and a memory.

    "how long has she been with us?" after "who is the head nurse" asks about Zanele
    Mokoena, whom the reply named, not any nurse. Only a name the memories back up: a reply
    may name someone the store never mentioned.
    """
    if not (_WHO.match(said.user) and said.memories):
        return ""
    asked_for = person_in(said.user)
    if asked_for and asked_for.split()[-1].casefold() not in ROLES:
        return ""  # "who's Teo": the question names him, and "his" is Teo
    # Not a name the question gave: "Aoife's teacher is Ms Brennan" answers with Ms Brennan.
    asked = {name.casefold() for name in names_in(said.user)}
    # And a memory about them says what the question asked: "Who's my client in
    # Villeurbanne?" answered with the other client, whose memory never says Villeurbanne,
    # made "his permit" hers.
    topic = {t for t in tokenize(said.user) if t not in ROLES}

    def backed(name: str) -> bool:
        hits = about_person(said.memories, name)
        about = [t for t, hit in zip(said.memories, hits, strict=True) if hit]
        return bool(about) and (not topic or any(topic & set(tokenize(t)) for t in about))

    named = (n for n in names_in(said.assistant) if n.casefold() not in asked and backed(n))
    return next(named, "")


def speaks_of_user(message: str) -> bool:
    """True for a message with "I", "my", "we"…: "now one about my dog" is the user's."""
    return any(w.casefold() in SELF for w in words(message))


def _names_someone(message: str, said: Said) -> bool:
    """True when a message names someone: a capitalised name, or one typed in lower case."""
    spelt = (*said.memories, said.assistant)
    # "and callum's?": whose, though no note spells Callum as a name.
    owner = (w.casefold().removesuffix("'s") for w in words(message) if w.endswith("'s"))
    return (
        any(is_name(w) for w in words(message)[1:])
        or bool(typed_name(message, spelt))
        or any(w not in FUNCTION_WORDS for w in owner)
    )


def _whom_asked(question: str) -> str:
    """The one person a question asks about, an opening name included ("Moose has been…")."""
    person = one_person(question)
    first = words(question)[:2]
    # "What time is my Class 1 medical?": a label, not a person.
    label = len(first) > 1 and first[1][:1].isdigit()
    opening = bool(first) and first[0].casefold().removesuffix("'s") == person and not label
    return person if person and (opening or person_in(question).casefold().endswith(person)) else ""


def asked_about(message: str, earlier: Said) -> str:
    """Whom a follow-up that names no one asks about: whom the question it continues asked.

    "when's the vet appointment?" after "Moose has been pawing at his mouth" asks about
    Moose's, not the other cat's; "and mine?" after Eli's practice asks about the user.
    """
    if speaks_of_user(message) or _names_someone(message, earlier):
        return ""
    return _whom_asked(earlier.user)


def referent_person(recent: Sequence[Said]) -> str:
    """Who a "she" or "their" points at: the newest person named in what was said."""
    for said in reversed(recent):
        spelt = (*said.memories, said.assistant)
        answer = _answer_names(said) or person_in(said.user) or typed_name(said.user, spelt)
        if answer:
            return answer
        for text in (said.query, *said.memories[:1], said.assistant):
            person = person_in(text)
            if person:
                return person
    return ""
