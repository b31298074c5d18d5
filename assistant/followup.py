"""Follow-ups: a message that leans on the last turns, resolved into a standalone query.

"When's her birthday?" after "I need a gift idea for Mom" is searched as "When's Mom's
birthday?", and "What time?" after "When am I meeting Alex?" as "When am I meeting Alex?
What time?". No model call: word rules over the message and the last three exchanges,
a fraction of a millisecond. A message with no sign of leaning on them (a topic switch,
"What's the capital of Australia?") is left to be judged on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from assistant.gates.base import Said
from assistant.people import (
    ONE_PERSON,
    ROLES,
    SELF,
    about_person,
    content_words,
    names_in,
    new_names,
    one_person,
    person_in,
    pointing,
    substitute,
    typed_name,
    words,
)
from memory.tokens import tokenize

if TYPE_CHECKING:
    from memory.records import Memory

RECENT_TURNS = 3  # as memU's pre-retrieval decision reads: the last three exchanges

# Words that point back at something said before. "it" and "that" are also grammar ("is it
# going to rain", "a film that..."), so they count only in short messages (below).
# "what's ours called again?" after a fun fact about border terriers points back too.
_THING = {"it", "its", "that", "this", "those", "these", "there", "then", "ours", "mine"}
_OPENERS = re.compile(
    r"^\s*(?:and|also|but|so|then|or|plus|what about|how about|what else|anything else"
    r"|same for|tell me more|more about|why not|why|how come|really)\b",
    re.IGNORECASE,
)
# A fragment: a few words with no verb of its own ("What time?", "For how long?", "In
# which city?"). A question with its own verb ("What's 2+2?") stands alone.
_FRAGMENT_WORDS = 4
_VERBS = re.compile(
    r"\b(?:is|are|was|were|am|be|been|do|does|did|can|could|will|would|should|shall|may|"
    r"might|must|have|has|had|get|got|make|tell|give|write|say|go|need|want|like|know)\b"
    r"|['’](?:s|re|m|ve|ll|d)\b",
    re.IGNORECASE,
)
# A reaction, not a question about what was said ("thanks", "cool", "lol").
_SMALL_TALK = frozenset(
    "thanks thank thx ty cool great nice ok okay lol haha awesome perfect bye hi hey hello "
    "good wow yes no yep nope sure".split()
)
# A reaction before an "and": "grand. and what time is the appointment?" continues. Not
# before a "so": "ok so how much runway does that give us" is a sentence of its own.
_REACTIONS = "|".join(sorted(_SMALL_TALK | {"grand", "lovely", "ha"}))
_REACTION_AND = re.compile(
    rf"^(?:\s*(?:{_REACTIONS})\b[\s.,!]*)+(?:and|also|plus|what about|how about)\b",
    re.IGNORECASE,
)
# What a follow-up asks for, not what it is about: "physio for my shoulder? what time"
# shares "time" with "part time as a barista", and "every" joins any two routines; "In
# which town?" names no town.
_ASKED_FOR = frozenset(
    """time times day days date week weeks month months year years long much many often
    every right soon next last first town city place country area exactly per""".split()
)

_ASKED_TERMS = frozenset(tokenize(" ".join(_ASKED_FOR)))

# A longer message that ends on "that" or "it" still points back ("…ask about that?").
_LONG_POINTER_WORDS = 14
# Question words alone, typos included: "were?" is a fast "where?".
_ASKS = frozenset("where were wher when wen whn why how who what wat wot which whose".split())
_DEFINITE = re.compile(r"\b(?:the|that|those)\s+([A-Za-z][a-z-]{2,})\b", re.IGNORECASE)
_BACK = re.compile(r"\b(?:back to|going back|returning to)\b", re.IGNORECASE)
_BACK_WORDS = 20
_AGAIN = re.compile(r"\b(?:again|earlier|before|back to|the first|that one)\b", re.IGNORECASE)


# Which of some names the user's memories mention (the store's keyword index), if known.
Known = Callable[[list[str]], list[str]] | None


@dataclass(frozen=True)
class Resolved:
    """A message read with the conversation: the standalone query, and what it leaned on."""

    query: str
    follow_up: bool = False
    turns_back: int = 0  # 1: it continues the last exchange; 2: the one before, ...
    referent: str = ""  # the words brought in from that exchange
    person: str = ""  # the one person it asks about ("Mom", "my manager"), if any
    # The query is the message itself, rewritten to stand alone ("When's Mom's birthday?"),
    # not the earlier words put before it ("dinner with Alex What time?").
    rewritten: bool = False
    # It names nothing of its own, only what it asks for ("which day?", "For how long?").
    bare: bool = False

    @property
    def source(self) -> str:
        """Where the query came from, as the badge says it."""
        if not self.follow_up:
            return ""
        return "from your last message" if self.turns_back == 1 else "from earlier in this chat"


def _names_what_was_said(message: str, earlier: str) -> bool:
    """True when "the X" of a short message is a thing the earlier exchange talked about.

    "Where is the wedding again?" after "Is my sister getting married soon?" (whose memory
    and reply speak of the wedding) asks about that wedding, not any other one.
    """
    said = {w.casefold() for w in words(earlier)}
    return any(w.casefold() in said for w in _DEFINITE.findall(message))


def leans_on_earlier(message: str, earlier: str = "", known: Known = None) -> bool:
    """True when the message can't be read alone: a pronoun, a fragment or a continuation.

    `earlier` is the text of the exchange it would continue: an "and …" or a fragment that
    names something new ("And the capital of France?") is a switch, judged on its own,
    unless the user's memories mention it (`known`): "And Mum's?" after a birthday.
    """
    tokens = [w.casefold() for w in words(message)]
    if not tokens or tokens[0] in _SMALL_TALK and len(tokens) <= 3:
        return False
    if pointing(tokens):
        return True
    if len(tokens) <= 8 and any(t in _THING for t in tokens):
        return True
    if len(tokens) <= _LONG_POINTER_WORDS and tokens[-1] in _THING:
        return True  # "Who on my team should I ask about that?": it ends on what was said
    if len(tokens) <= 2 and tokens[0] in _ASKS:
        return True  # "Where?", "were?" (a typed "where"), "why though"
    # "ok back to the camping trip, which day do we come home?" says it goes back, at any
    # length up to a sentence.
    limit = _BACK_WORDS if _BACK.search(message) else 10
    if len(tokens) <= limit and _names_what_was_said(message, earlier):
        return True
    fragment = len(tokens) <= _FRAGMENT_WORDS and not _VERBS.search(message)
    if fragment and re.search(r"\d", message):
        return False  # "17 * 23?" is a sum, not a fragment
    opener = _OPENERS.match(message) or _REACTION_AND.match(message)
    if (fragment or opener) and len(tokens) <= 10:
        new = new_names(message, earlier)
        return not new or bool(known and known(new))
    return False


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


def _referent_person(recent: Sequence[Said]) -> str:
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


def _all_said(said: Said) -> str:
    return " ".join((said.user, said.query, said.assistant, *said.memories))


def _continued(message: str, recent: Sequence[Said]) -> int:
    """How many exchanges back the message continues: the last, unless it goes back."""
    if len(recent) < 2:
        return 1
    if _BACK.search(message):
        # "ok back to his birthday" leaves the last exchange, even an aside that was
        # searched ("a good first truck" found the user's truck, whose "Transmission's
        # starting to slip" became "his"): the newest earlier turn that searched.
        searched = (b for b in range(2, len(recent) + 1) if recent[-b].query)
        return next(searched, 2)
    if recent[-1].query:
        return 1
    # "What time was that again?" after a general aside returns to the memory topic, and so
    # does "ok and what time was the appt?" after "what is afib exactly": "the appt" is
    # what the memory turn spoke of, not the aside.
    aside = _names_what_was_said(message, _all_said(recent[-1]))
    for back in range(2, len(recent) + 1):
        if recent[-back].query and (
            _AGAIN.search(message)
            or not aside
            and _names_what_was_said(message, _all_said(recent[-back]))
        ):
            return back
    return 1


def resolve(message: str, recent: Sequence[Said], known: Known = None) -> Resolved:
    """The message as a standalone query, using the last exchanges (oldest first) if needed."""
    recent = list(recent)[-RECENT_TURNS:]
    if not recent:
        return Resolved(query=message, person=one_person(message))
    back = _continued(message, recent)
    earlier = recent[-back]
    said = _all_said(earlier)
    if not leans_on_earlier(message, said, known):
        return Resolved(query=message, person=one_person(message))
    about = earlier.query or earlier.user
    # "Now one about my dog, use his name": the message's own "my dog" comes first.
    pronoun = re.search(r"\b(?:he|him|his|she|her|hers|they|them|their|theirs)\b", message, re.I)
    own = person_in(message[: pronoun.start()]) if pronoun else ""
    person = own or _referent_person(recent[: len(recent) - back + 1])
    tokens = {w.casefold() for w in words(message)}
    # Names the earlier question did not ask about: "And Aoife's?" after "When's Oisín's
    # birthday?" asks the same of Aoife, even when that turn's memories named her. Only in
    # a few words: "Why did Mike move to Alaska?" is a question of its own.
    new = new_names(message, f"{earlier.user} {earlier.query}")
    if person and new and len(tokens) <= _FRAGMENT_WORDS:
        # "And Mum's?" after "When's Declan's birthday?": the same question, another person.
        query = re.sub(rf"\b{re.escape(person)}\b", new[0], earlier.user)
        if query != earlier.user:
            return Resolved(query, True, back, referent=new[0], person=new[0], rewritten=True)
    role = person_in(message)
    if person and not pointing(tokens) and role.removeprefix("my ").casefold() in ROLES:
        # "and my mom's?" after "When's Nandi's birthday?": the same question, someone named
        # by role; "my brother" after "When's Declan's birthday?" may be Declan, and asks
        # the same.
        query = re.sub(rf"\b{re.escape(person)}\b", role, earlier.user)
        if query != earlier.user:
            return Resolved(query, True, back, referent=role, person=role, rewritten=True)
    if person and pointing(tokens):
        query = substitute(message, person)
        # "they" also stands for a place or a company ("anything they serve" at Nopa), so
        # only "he" and "she" say for sure that the follow-up asks about one person.
        one = person if pointing(tokens) & ONE_PERSON else ""
        return Resolved(query, True, back, referent=person, person=one, rewritten=True)
    new = [w for w in content_words(about) if w.casefold() not in tokens]
    referent = " ".join(new)
    query = f"{about.strip()} {message.strip()}" if referent else message
    own = [w for w in content_words(message) if w.casefold() not in _ASKED_FOR | _ASKS]
    # "and us?", "and mine?": the same question about someone else, not the same fact.
    return Resolved(query, True, back, referent=referent, bare=not own and not tokens & SELF)


# A follow-up is answered with at most this many of its own search's memories, and the
# one the turn it continues was answered with first: the 1.5B model read whichever fact
# stood nearby, and every development miss had the answer among five (docs/followups.md).
FOLLOW_UP_FOUND = 2


def answered_with(
    resolved: Resolved, earlier: Sequence[Memory], found: Sequence[Memory]
) -> tuple[Memory, ...]:
    """The memories a message is answered with, from what its search `found`.

    A message about one person ("I need a gift idea for Mom", or "When's her birthday?"
    after it) is not handed memories about someone else, when some found speak of them:
    answering with "Jordan's birthday is on June 14" names the wrong person.

    A follow-up gets the best two of what its search found, then the memory the turn it
    continues was answered with first (`earlier`, that turn's memories). "What time?" after
    "When am I meeting Alex?" keeps the memory that turn used, even when its own search
    finds nothing: an empty search must not make the model drop what it was given a turn
    ago. The resolved query carries the earlier topic, so what it finds comes first.
    """
    found = tuple(found)
    earlier = tuple(earlier) if resolved.follow_up else ()
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
    own = set(tokenize(resolved.query)) - set(tokenize(resolved.referent)) - _ASKED_TERMS
    return tuple(sorted(kept.values(), key=lambda m: -len(own & set(tokenize(m.text)))))


def _on_topic(resolved: Resolved, found: tuple[Memory, ...]) -> tuple[Memory, ...]:
    """What a follow-up's search found that speaks of the conversation or the message.

    "Since when?" after the penicillin allergy also finds "vegan since January 2022", and
    "where are they playing?" after Arlo Parks the netball court; the 1.5B model answered
    with those. A memory stays when it speaks of what the follow-up leans on (`referent`)
    or names a word of the query ("Am I allergic to anything they serve?" keeps the
    allergy), and so does the search's best; when none does, all stay.
    """
    texts = [m.text for m in found]
    named = {w.casefold() for w in content_words(resolved.query)} - _ASKED_FOR
    hits = [
        about or any(w.casefold() in named for w in content_words(text))
        for text, about in zip(texts, about_person(texts, resolved.referent), strict=True)
    ]
    if not any(hits):
        return found
    # The search's own best for the resolved query stays too: "Studied at Onderstepoort,
    # qualified 2011" shares no word with "…and what year did I qualify?", yet tops it.
    return tuple(m for i, (m, hit) in enumerate(zip(found, hits, strict=True)) if hit or i == 0)


def _marks(text: str) -> set[str]:
    """The words and numbers of a text that can show which fact a reply used."""
    return {w.casefold().removesuffix("'s") for w in content_words(text)} - _ASKED_FOR


def reply_used(memories: Sequence[str], reply: str, message: str) -> tuple[str, ...]:
    """The memories a reply used: those sharing the most of its own words, or none.

    "Ollie Brennan" answered "Who's my dive buddy?" with one memory of the five it was sent;
    replayed with all five, the next turn's "What's he studying?" got the user's own
    thesis topic. A word the message itself said shows nothing ("Liam" in "When's Liam's
    birthday?").
    """
    said = _marks(reply) - _marks(message)
    shared = [len(_marks(text) & said) for text in memories]
    best = max(shared, default=0)
    return tuple(text for text, n in zip(memories, shared, strict=True) if best and n == best)


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
