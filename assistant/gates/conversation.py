"""The chain's last step: the gate's decision read again with the conversation.

The resolver (assistant/followup.py) says whether a message leans on the last exchanges
and what it means standing alone; this step decides what that changes about the decision.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from assistant.followup import Resolved, own_words, switched_to
from assistant.gates.base import GateDecision, Method, Said
from assistant.gates.vocabulary import name_like
from assistant.people import asks_something, is_question
from assistant.referents import ONE_PERSON, pointing, said_words, speaks_of_user
from assistant.typed import Known

FOLLOW_UP_REASON = "follows up on your memories"
GENERAL_CHAIN_REASON = "continues a general question"
WORLD_REASON = "asks a fact of the world about it"
# Three letters at least: "US" and "UK" are places, and the store reads them as "us".
_ACRONYM = re.compile(r"\b[A-Z]{3,}[0-9]*\b")
_WHO_ASKED = re.compile(r"^\W*(?:(?:ok|so|and|but)\W+)?(?:who|whom|whose)\b", re.IGNORECASE)


def continues_general(
    decision: GateDecision,
    message: str,
    resolved: Resolved,
    continued: Said | None,
    known: Callable[[list[str]], list[str]] | None = None,
) -> GateDecision:
    """A gate's retrieve on a follow-up of a general exchange, read with that exchange.

    "and in the UK?" after "What's the tallest mountain in Ireland?" reads, alone, like a
    question about the user's life (the local gate: p=0.80), and the nothing-found note
    then made the 1.5B model say it had no information. A follow-up of an exchange that
    was not searched is as general as it, unless it speaks of the user ("now one about my
    dog"), asks about someone of theirs ("his birthday" after "My son wants…"), or the
    question it continues named something their memories mention (`known`:
    "when?" after "where's the FCC testing", a question the gate missed), or it asks after
    a remark of the user's the memories speak of ("code?" after "storeroom's locked again":
    a remark asks nothing, so there is no general question to continue). A name the
    follow-up itself names ("now one about Biscuit") is the vocabulary rule's to find,
    next in the chain.
    """
    if not (resolved.follow_up and continued is not None and not continued.query):
        return decision
    if not decision.retrieve or decision.method not in (Method.LOCAL, Method.MODEL):
        return decision
    if speaks_of_user(message):
        return decision
    if resolved.person.casefold().startswith(("my ", "our ")):
        # "when's his birthday again?" after "My son wants a dinosaur party…": the aside
        # was general, but "his" is the user's son.
        return decision
    if _someone_known(resolved.person, message, continued, known):
        return decision
    # Names, codes and acronyms only: "the biggest" in "what's the biggest dairy state in the
    # US" is no thing of the user's, though a memory may say "biggest".
    named = [*name_like(continued.user, things=False), *_ACRONYM.findall(continued.user)]
    if known is not None and known(named):
        return decision
    if _asks_a_detail_of_known(resolved, continued, known):
        return decision
    if _asks_after_a_remark(message, continued, known):
        return decision
    return _general(decision)


def _asks_after_a_remark(message: str, continued: Said, known: Known) -> bool:
    """True for a question after a remark of the user's that the memories speak of.

    "storeroom at tower 3 is locked again" then "code?": the gate skipped the remark, which
    asks nothing, and no general question was asked for the follow-up to continue.
    """
    if known is None or not is_question(message) or asks_something(continued.user):
        return False
    return bool(known(own_words(continued.user)))


def _asks_a_detail_of_known(resolved: Resolved, continued: Said, known: Known) -> bool:
    """True for a bare follow-up ("what time?", "when?") of a statement the memories speak of.

    "eye screening is coming up soon na" then "what time?", or "where's marta moving to"
    then "when?": the local gate read the first alone as general (p=0.01, 0.02), a statement or
    a name typed in lower case, and the follow-up asks only for a detail of it. Any word of
    it the memories contain, not only names. Not after "who …?": "who discovered
    penicillin" then "in what year?" asks the world, though a note says "allergic to
    penicillin". A follow-up that names something of its own ("and its population?") is
    judged as before.
    """
    if not resolved.bare or known is None or _WHO_ASKED.match(continued.user):
        return False
    return bool(known(own_words(continued.user)))


def _someone_known(person: str, message: str, continued: Said, known: Known) -> bool:
    """True when the follow-up is about someone the memories know, whom the user named.

    "tavita wants that for his bday, when is it again?" after a recipe, or "what time?"
    after "Moss is due his booster jab isn't he": a person of the user's, though the
    exchange before was not searched. Only whom "he" or "she" points at, or whom that
    exchange named: "and of New Zealand?" names no one.
    """
    if not person or known is None:
        return False
    pointed = pointing(said_words(message)) & ONE_PERSON
    named = person.casefold() in continued.user.casefold()
    return bool((pointed or named) and known([person]))


# What a question asks when its answer is a fact of the world, whatever "it" or "there"
# points at: a currency, a river, who made or wrote it, what letters stand for, a unit, a
# time zone ("what time zone is that city in?" after the Orlando trip got "Central").
_OF_THE_WORLD = re.compile(
    r"\b(?:currency|currencies|money do they use|capital|continent|country|province|county"
    r"|prefecture|ocean|river|population|language do they speak|stands? for"
    r"|composed|directed|invented|discovered|founded|who wrote|written by"
    r"|who (?:makes|made|manufactures) (?:those|them|it|that|these)"
    r"|organ|planet|how many \w+ (?:in|per) (?:an?|one)|time ?zones?"
    r"|(?:another|other|medical|scientific) (?:name|word|term) for)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[,;.!?]\s+|\s+-\s+")
# "what country is she from?" after "who is Kenji's wife?" asks about someone of the user's.
_SOMEONE = re.compile(r"\b(?:he|she|him|her|his|hers)\b", re.IGNORECASE)
# A retrieve the gate was this unsure of is no reading of a follow-up's meaning: "which
# province is that in again?" retrieved alone at p=0.18.
_UNSURE = 0.3


def asks_the_world(
    decision: GateDecision, message: str, resolved: Resolved, continued: Said | None
) -> GateDecision:
    """A follow-up of a searched exchange that asks a fact of the world is not searched.

    "what currency do they use there?" after "what are my bkk layover dates" was searched
    with that question: the notes found beside Bangkok made the reply "the Indian rupee",
    as "what river runs through it?" after a London trip got the Tiber. The gate, reading
    the message alone, skipped it or barely retrieved it; a question of the world about
    what was just said is as general, unless it speaks of the user or of a person ("what
    country is she from?" after "who is Kenji's wife?").
    """
    if not (resolved.follow_up and continued is not None and continued.query):
        return decision
    if decision.method not in (Method.LOCAL, Method.MODEL):
        return decision
    if decision.retrieve and (decision.confidence is None or decision.confidence >= _UNSURE):
        return decision
    # The clause that asks: "i should learn a few words, what language do they speak
    # there?" speaks of the user, but asks the world.
    asks = next((c for c in _CLAUSE.split(message) if _OF_THE_WORLD.search(c)), "")
    if not asks or speaks_of_user(asks) or _SOMEONE.search(asks):
        return decision
    if resolved.person.casefold().startswith(("my ", "our ")):
        return decision
    return replace(
        decision, retrieve=False, query="", reason=WORLD_REASON, method=Method.CONVERSATION
    )


def personal_reading(message: str) -> float:
    """How surely the local gate, reading the message alone, takes it to ask about the user.

    Its p, 0 when it gives none: the follow-up resolver's reading of a message past an aside,
    and of the aside itself (`followup.resolve`), in every mode. The local gate is the one
    reading that costs no model call.
    """
    from assistant.gates.local.shared import shared_local_gate  # numpy: not at import time

    p = shared_local_gate().decide(message).confidence
    return 0.0 if p is None else p


def _general(decision: GateDecision) -> GateDecision:
    """The decision turned to skip: the message is as general as the chain it is in."""
    return replace(
        decision, retrieve=False, query="", reason=GENERAL_CHAIN_REASON, method=Method.CONVERSATION
    )


def switches_in_general(
    decision: GateDecision,
    message: str,
    said: Sequence[Said],
    known: Callable[[list[str]], list[str]] | None,
) -> GateDecision:
    """A gate's retrieve on a switch within a general chain, unless the memories know it.

    "and of Wales?" after "What's the capital of Scotland?" names a new place, so it is no
    follow-up, and the local gate, reading it alone, retrieved it: nothing was found, and
    the reply was "I don't know that yet". A short "and …" or fragment after a general
    exchange that names only what the user's memories never mention is general too.
    """
    if not (said and decision.retrieve and decision.method in (Method.LOCAL, Method.MODEL)):
        return decision
    last = said[-1]
    new = None if last.query else switched_to(message, f"{last.user} {last.assistant}")
    if not new or known is None or known(new) or speaks_of_user(message):
        return decision
    return _general(decision)


def in_conversation(
    decision: GateDecision, resolved: Resolved, continued: Said | None, keep_query: bool = False
) -> GateDecision:
    """The gate's decision on the message alone, read again with the conversation.

    - A follow-up of an exchange that searched memory searches too, with the resolved
      query: "What time?" after "When am I meeting Alex?" needs the same memory.
    - Any retrieving follow-up searches with the resolved query.
    - A skipped follow-up of a general exchange stays skipped: "and cubed?" after "what's
      12 squared" is as general as the question it continues ("Now one about my cat",
      after a joke, is retrieved by the gate on its own words).
    A correction's or an empty message's decision is the user's or final: only the query
    of a retrieving one is resolved. `keep_query`: the gate read the conversation itself
    (the `llm` gate), and the standalone query its model wrote stands.
    """
    if not resolved.follow_up or continued is None or decision.method is Method.EMPTY_INPUT:
        return decision
    if decision.retrieve:
        own = keep_query and decision.method is Method.MODEL and bool(decision.query)
        return replace(
            decision, query=decision.query if own else resolved.query, query_source=resolved.source
        )
    # A skip the conversation step made itself (`asks_the_world`) stands.
    skipped_here = decision.method in (Method.CORRECTION, Method.CONVERSATION)
    if skipped_here or not continued.query or resolved.implicit:
        return decision
    return replace(
        decision,
        retrieve=True,
        query=resolved.query,
        reason=FOLLOW_UP_REASON,
        method=Method.CONVERSATION,
        query_source=resolved.source,
    )
