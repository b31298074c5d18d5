"""Which memories a turn is answered with, and which of them its reply used.

A follow-up keeps the fact the turn it continues was answered with; a message about one
person is not handed memories about someone else. Word rules only, no model call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from assistant.asked import ASKED_FOR, ASKED_TERMS, asked_kinds, holds
from assistant.followup import Resolved
from assistant.people import about_person, content_words
from assistant.referents import pet_named
from assistant.ruled import ruled_out, without_ruled_out
from assistant.used import reply_used
from memory.records import Memory
from memory.tokens import tokenize

# A follow-up is answered with at most this many of its own search's memories, and the
# one the turn it continues was answered with first: the 1.5B model read whichever fact
# stood nearby, and every development miss had the answer among five (docs/followups.md).
FOLLOW_UP_FOUND = 2


def answered_with(
    resolved: Resolved,
    earlier: Sequence[Memory],
    found: Sequence[Memory],
    message: str = "",
    continued: str = "",
) -> tuple[Memory, ...]:
    """The memories a message is answered with, from what its search `found`.

    A message about one person ("I need a gift idea for Mom", or "When's her birthday?"
    after it) is not handed memories about someone else, when some found speak of them:
    answering with "Jordan's birthday is on June 14" names the wrong person.

    A follow-up gets the best two of what its search found, then the memory the turn it
    continues was answered with first (`earlier`, that turn's memories). "What time?" after
    "When am I meeting Alex?" keeps the memory that turn used, even when its own search
    finds nothing: an empty search must not make the model drop what it was given a turn
    ago. The resolved query carries the earlier topic, so what it finds comes first. When
    that memory holds what the follow-up `message` asks for, it goes alone (`_still_on`).
    A fact the user said it is not ("the GP appt, not the dentist one", in the message or
    the `continued` one) is left out (`_not_ruled_out`).
    """
    ruled = ruled_out(continued, message)
    meant = set(tokenize(without_ruled_out(f"{continued} {message}", ruled))) - ASKED_TERMS
    found = _not_ruled_out(tuple(found), ruled, meant)
    earlier = _not_ruled_out(tuple(earlier), ruled, meant) if resolved.follow_up else ()
    if resolved.person:
        pool = (*found, *earlier)
        hits = about_person([m.text for m in pool], resolved.person)
        about = {m.id for m, hit in zip(pool, hits, strict=True) if hit}
        if about:
            found = tuple(m for m in found if m.id in about)
            earlier = tuple(m for m in earlier if m.id in about)
    if not resolved.follow_up:
        return found
    if resolved.referent and not resolved.person:
        found = _on_topic(resolved, found)
    own = set(tokenize(resolved.query)) - set(tokenize(resolved.referent)) - ASKED_TERMS
    # Only when the search's best for the resolved query is that fact too: two readings of
    # the conversation agree on what it is on.
    on_it = earlier[:1] and found[:1] and found[0].id == earlier[0].id
    if on_it and _still_on(earlier[0].text, message, own):
        return earlier[:1]
    if resolved.bare and earlier[:1]:
        # "which day?" after "my mum calls every week right": the conversation is still on
        # the fact that turn was answered with. A second fact beside it (the supervisor's
        # Friday check-in) is what the 1.5B model answered with, so that fact goes nearest
        # the question, and alone when the search's best is that fact too.
        if found[:1] and found[0].id == earlier[0].id:
            return found[:1]
        return tuple({m.id: m for m in (*earlier[:1], *found[:1])}.values())
    kept: dict[str, Memory] = {m.id: m for m in (*found[:FOLLOW_UP_FOUND], *earlier[:1])}
    # The follow-up's own words name what it asks for: "and mine with the knee guy?" after
    # Dad's heart appointment got Dad's, the search's best for the query with his words in
    # it, nearest the question. What shares the most of its own words goes first.
    return tuple(sorted(kept.values(), key=lambda m: -len(own & set(tokenize(m.text)))))


# A note that speaks of what was ruled out stays when it holds this share (and two at least)
# of the words of what the user does mean: one note can hold both codes.
_ALSO_MEANT = 0.75


def _not_ruled_out(
    memories: tuple[Memory, ...], ruled: set[str], meant: set[str] = frozenset()
) -> tuple[Memory, ...]:
    """The memories without those the user ruled out, unless that would leave none.

    Sent the GP's and the dentist's appointments for "the GP appt, not the dentist one",
    then "what time's that?", the 1.5B model answered with the dentist's time. But "shop
    locker code 4719, back godown lock 2286" holds what "i need the godown lock code, not
    the locker one" means too (`meant`: its words bar the ruled-out ones), and stays.
    """
    if not ruled:
        return memories

    def stays(memory: Memory) -> bool:
        said = set(tokenize(memory.text))
        shared = len(meant & said)
        also = shared >= 2 and shared >= _ALSO_MEANT * len(meant)
        return not ruled & said or also

    kept = tuple(m for m in memories if stays(m))
    return kept or memories


# Words a follow-up says of any event or thing, which name none: "what time does it start
# again?" is about the party the chat is on, though the party's note never says "start",
# and "how much did it cost?" about the Easter flight, whose note says "$139 return".
_SAID_OF_ANY = frozenset(
    tokenize(
        "start starts begin end finish open close leave arrive land usually normally need "
        "supposed exactly roughly again back due go come make happen cost costs price fee "
        "charge paid pay"
    )
)


def _still_on(fact: str, message: str, own: set[str]) -> bool:
    """True when the fact a conversation is on answers the follow-up alone.

    "how much was the quote?" after "when does the home insurance renew": the home quote,
    £214, answers it. Sent beside the car insurance's quote, £687, that is what the 1.5B
    model answered with (and "renewal date?" after the liability insurance got the
    licence's renewal). So when that fact holds the kind of answer asked for (a time, a
    day, an amount) and every word the follow-up adds is in it, it goes alone. "And
    electricity?" names what the fact is not about, and keeps the search.
    """
    kinds = asked_kinds(message)
    if not kinds or not holds(fact, kinds):
        return False
    # Five letters decide: "renewal" is the fact's "renews", "quote" its "quoted".
    stems = {t[:5] for t in tokenize(fact)}
    return all(w[:5] in stems for w in own - _SAID_OF_ANY)


def _on_topic(resolved: Resolved, found: tuple[Memory, ...]) -> tuple[Memory, ...]:
    """What a follow-up's search found that speaks of the conversation or the message.

    "Since when?" after the penicillin allergy also finds "vegan since January 2022", and
    "where are they playing?" after Arlo Parks the netball court; the 1.5B model answered
    with those. A memory stays when it speaks of what the follow-up leans on (`referent`)
    or names a word of the query ("Am I allergic to anything they serve?" keeps the
    allergy), and so does the search's best; when none does, all stay.
    """
    texts = [m.text for m in found]
    named = {w.casefold() for w in content_words(resolved.query)} - ASKED_FOR
    hits = [
        about or any(w.casefold() in named for w in content_words(text))
        for text, about in zip(texts, about_person(texts, resolved.referent), strict=True)
    ]
    if not any(hits):
        return found
    # The search's own best for the resolved query stays too: "Studied at Onderstepoort,
    # qualified 2011" shares no word with "…and what year did I qualify?", yet tops it.
    return tuple(m for i, (m, hit) in enumerate(zip(found, hits, strict=True)) if hit or i == 0)


class _Answered(Protocol):
    """A turn as `carried` reads it."""

    message: str
    reply: str
    memories: tuple[Memory, ...]


def carried(turn: _Answered, before: Sequence[str] = ()) -> tuple[Memory, ...]:
    """The memories of the turn a follow-up continues, the ones its reply used first.

    The fact a conversation is on is the one the last reply used, not the first its search
    found: "what time is it?" after the reply named the dentist filling means the filling,
    not the check-up found beside it. When that reply shows none ("Yes, that is at
    Salamanca Dental."), the replies `before` it do; else the search's order stands.
    """
    texts = [m.text for m in turn.memories]
    used = set(reply_used(texts, turn.reply, turn.message))
    if not used and before:
        used = set(reply_used(texts, " ".join(before), turn.message))
    return tuple(sorted(turn.memories, key=lambda m: m.text not in used))


# "What time is it at?" after the optician: the 1.5B model answered with a clock time of
# its own ("It's 11:15 AM"), as if asked the time now. "that" can only be what was said.
_IT_NOW = re.compile(r"\b(what|which)(\s+)(time|day|date)(\s+)is(\s+)it\b", re.IGNORECASE)
# "whats the date again?" after "got a card for mom's birthday" asks hers: sent today's date,
# both always and `local` answered "Sunday 06 December 2026" (actuary set).
_THE_DATE = re.compile(
    r"^\W*(?:(?:ok|so)\W+)?what(?:['’]?s| is| was) the date(?:\s+again)?\W*$", re.IGNORECASE
)


def meant_of(message: str, resolved: Resolved, memories: Sequence[str], rewrite: bool) -> str:
    """What the reply model is told the message meant, or "" when its own words say it.

    When `rewrite` (the gate read the conversation), a follow-up rewritten to stand alone:
    "When's her birthday?" is "When's Mom's birthday?". "what time is it?" on a follow-up
    is "what time is that?". And "my dog" is "my dog Chorizo" when a fact given names him:
    else the 1.5B model's joke "about my dog, by name" was about a "Max".
    """
    # Past an aside too: "where is it again?" after the dinner with Alex and "btw how many
    # ml in a pint" was answered as if about the pint, with the dinner's note alone given.
    back = resolved.follow_up and resolved.turns_back > 1
    said = resolved.query if (resolved.rewritten or back) and rewrite else ""
    if not said and rewrite and resolved.follow_up and _IT_NOW.search(message):
        said = _IT_NOW.sub(r"\1\2\3\4is\5that", message)
    if not said and rewrite and resolved.follow_up and _THE_DATE.match(message):
        said = "what's the date of that?"  # after "léa's birthday": hers, not today's
    return pet_named(said or message, memories) or said
