"""Small text helpers: the words of a message, and labels shared by the UI and its messages.

A leaf: it imports nothing from the project.
"""

from __future__ import annotations

import re
from enum import Enum


def end_sentence(text: str) -> str:
    """`text` ending in one full stop: a message built from another one must not end in '..'."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."


class Label(str, Enum):
    """An Enum of states that reads as its value in text, as the plain string it replaced."""

    def __str__(self) -> str:
        return str(self.value)


# English function words: grammar, never what a message is about. The only word list the
# conversation mechanism reads (assistant/conversation), with the pronouns below.
FUNCTION_WORDS = frozenset(
    """a an the and or but so of to in on at for with by from about as into over after before
    i me my mine we us our you your yours he him his she her hers they them their it its this
    that these those there here then what whats what's which who whom whose when where why how
    is are was were am be been being do does did done can could will would should shall may
    might must have has had having get got not no yes please thanks thank ok okay just also
    really very some any more most much many one ones again too well now tell say give know
    want need like let lets let's i'm i've i'd i'll it's that's there's don't can't won't
    remind remember recall since until till ago still ever yet""".split()
)
# The words a message speaks of its sender with: "now one about my dog" is about the user.
SELF = frozenset(
    "i me my mine myself we us our ours ourselves i'm i've i'd i'll im ive we're we've "
    "we'd we'll".split()
)
_QUESTION_OPENERS = frozenset(
    "who whos who's what whats what's when whens when's where wheres where's which why how "
    "is are was were do does did can could will would should has have anything any".split()
)
# Letters of any alphabet: "Oisín's" is one word, not "Ois" and "n's".
_WORD = re.compile(r"[^\W\d_][\w'’]*|\d[\w:.,]*")


def words(text: str) -> list[str]:
    """The words of a text, apostrophes kept ("what's", "Mom's")."""
    return [w.replace("’", "'") for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """The words of a text that may name a thing: not grammar, no duplicates, in order."""
    out: list[str] = []
    seen: set[str] = set()
    for w in words(text):
        key = w.casefold().removesuffix("'s")
        if key in FUNCTION_WORDS or len(key) < 2 or key in seen:
            continue
        seen.add(key)
        out.append(w.removesuffix("'s"))
    return out


def is_question(text: str) -> bool:
    """True for a question ("anything I should avoid for my son?"), not a request."""
    first = words(text)[:1]
    return text.rstrip().endswith("?") or (bool(first) and first[0].casefold() in _QUESTION_OPENERS)
