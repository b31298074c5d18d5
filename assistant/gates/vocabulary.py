"""The vocabulary rule: a name or code that the user's memories mention needs memory.

"What breed is Mango?", "What does Noor do?", "Which chip is on the v3 board?": nothing in
the words says they are about the user's life, so a gate that reads only the message
skips them, and the model then invents an answer. But Mango, Noor and v3 are in the
user's memories. When a gate skips a message, its names and codes are looked up in the
store's keyword index (word counts only: no memory is read, no search is run) and, when
the user's memories mention one, the message retrieves, and the badge says why.

The rule is a heuristic, so its decisions (`Method.VOCABULARY`) can be corrected like the
gate's own ("Wrong decision?"), and it never overrules a correction: the user's word on a
message is final (a "Which country is Cork in?" the user marked general stays skipped).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from assistant.gates.base import GateDecision, Method
from assistant.text import FUNCTION_WORDS, SELF

if TYPE_CHECKING:
    from memory.store import MemoryStore

# A single capitalised word (a first name, a pet, a place of one's own) or a code with a
# digit in it (v3, Q3, A320). Acronyms and runs of capitalised words (Royal Albert Hall,
# Barack Obama) are left out: they mostly name the world's things, not the user's.
_CAPITALISED_RUN = re.compile(r"\b[A-Z][a-z'’]+(?:\s+[A-Z][a-z'’]+)*\b")
_CODE = re.compile(r"\b(?:[A-Za-z]+\d[\w-]*|\d+[A-Za-z][\w-]*)\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n)\s*[\"“(]?([A-Z][a-z'’]+)")
_DEFINITE = re.compile(r"\b[Tt]he\s+([a-z][a-z-]{2,})\b")
# Words after "the" that are grammar or measure, never a thing of the user's.
_NOT_THINGS = frozenset(
    """best worst most least first last next same other difference meaning capital way
    number difference average sum total name time date day week month year world
    """.split()
)
_OWNER = re.compile(r"\b([^\W\d_][\w-]+)['’]s\b")
# Whose "'s" is grammar or time, not a name: "it's", "today's". Anything else ("amma's
# birthday", "the vet's") is someone of the user's only when the memories say so.
_NO_OWNERS = (
    FUNCTION_WORDS
    | SELF
    | frozenset(
        "who time day date week month year today tomorrow tonight yesterday world everyone "
        "someone somebody nobody".split()
    )
)
_log = logging.getLogger(__name__)

MAX_DEFINITE_WORDS = 10
MAX_WORDS = 15  # a longer message brings its own material (a word problem names its people)
# Only a judgement can be wrong this way, the gate's or the conversation's (a follow-up of
# a general question); a correction (Method.CORRECTION) is the user's own decision and is
# never turned over, nor a rule mode's fixed one.
ASKS_ABOUT = (Method.LOCAL, Method.MODEL, Method.CONVERSATION)


def name_like(message: str) -> list[str]:
    """Words of a short message that may name something of the user's: names, codes, and
    the nouns it says "the" of ("the company")."""
    if len(message.split()) > MAX_WORDS:
        return []
    # A capitalised word that opens a sentence is grammar, not a name ("Which", "Four").
    openers = {m.start(1) for m in _SENTENCE_START.finditer(message)}
    out: list[str] = []
    for run in _CAPITALISED_RUN.finditer(message):
        words = run.group(0).split()
        if run.start() in openers:
            words = words[1:]
        if len(words) == 1 and words[0] != "I":
            out.append(re.sub(r"['’]s?$", "", words[0]))
    out += _CODE.findall(message)
    # "where's tomás's futsal": a name typed in lower case, known by the "'s" it owns.
    out += [w for w in _OWNER.findall(message) if w.islower() and w not in _NO_OWNERS]
    if len(message.split()) <= MAX_DEFINITE_WORDS:
        # "the company", "the flat", "the seed": a short question about a thing it takes
        # for known. Only a thing this user's memories talk about counts (see `mentions`).
        out += [w for w in _DEFINITE.findall(message) if w.lower() not in _NOT_THINGS]
    return list(dict.fromkeys(out))


def with_vocabulary(decision: GateDecision, message: str, store: MemoryStore) -> GateDecision:
    """The decision, turned to retrieve when a skipped message names what memories mention.

    A store that cannot be read mentions nothing (`mentions_of`): the decision stands.
    """
    if decision.retrieve or decision.method not in ASKS_ABOUT:
        return decision
    started = time.perf_counter()
    known = mentions_of(store)(name_like(message))
    if not known:
        return decision
    return replace(
        decision,
        retrieve=True,
        query=message,
        reason=f"mentions {known[0]}, in your memories",
        method=Method.VOCABULARY,
        elapsed_ms=decision.elapsed_ms + (time.perf_counter() - started) * 1000.0,
    )


def mentions_of(store: MemoryStore) -> Callable[[list[str]], list[str]]:
    """The store's `mentions`; a store that cannot be read mentions nothing.

    It is an extra signal: a message is then decided without it, never left undecided.
    """

    def mentions(words: list[str]) -> list[str]:
        try:
            return store.mentions(words)
        except Exception:  # noqa: BLE001 - an extra signal: the message is read without it
            _log.warning("could not read the store's keyword index", exc_info=True)
            return []

    return mentions
