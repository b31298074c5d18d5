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
from typing import TYPE_CHECKING

from assistant.gates.base import Said

if TYPE_CHECKING:
    from memory.records import Memory

RECENT_TURNS = 3  # as memU's pre-retrieval decision reads: the last three exchanges

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’]*|\d[\w:.,]*")
# Words that point back at something said before. "it" and "that" are also grammar ("is it
# going to rain", "a film that..."), so they count only in short messages (below).
_PERSON = {"he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs"}
_ONE_PERSON = {"he", "him", "his", "she", "her", "hers"}
_THING = {"it", "its", "that", "this", "those", "these", "there", "then"}
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
# Question words alone, typos included: "were?" is a fast "where?".
_ASKS = frozenset("where were wher when wen whn why how who what wat wot which whose".split())
_DEFINITE = re.compile(r"\b(?:the|that|those)\s+([A-Za-z][a-z-]{2,})\b", re.IGNORECASE)
_AGAIN = re.compile(r"\b(?:again|earlier|before|back to|the first|that one)\b", re.IGNORECASE)
# Words that never name what a conversation is about.
_FUNCTION = frozenset(
    """a an the and or but so of to in on at for with by from about as into over after before
    i me my mine we us our you your yours he him his she her hers they them their it its this
    that these those there here then what whats what's which who whom whose when where why how
    is are was were am be been being do does did done can could will would should shall may
    might must have has had having get got not no yes please thanks thank ok okay just also
    really very some any more most much many one ones again too well now tell say give know
    want need like let lets let's i'm i've i'd i'll it's that's there's don't can't won't
    remind remember recall since until till ago still ever yet""".split()
)
# A name is shaped like one: "Maya", "Mom's"; not "MSc", "Q3" or "NHS".
_NAME = re.compile(r"[A-Z][a-z]+(?:'s)?")
# Kin and roles: how people in the user's life are named when not by name.
_ROLES = frozenset(
    """mom mum mother dad father sister brother partner wife husband boyfriend girlfriend
    son daughter kid kids child children grandma grandpa grandmother grandfather aunt uncle
    cousin niece nephew friend roommate flatmate boss manager coworker colleague neighbor
    neighbour doctor dentist therapist landlord teacher coach cofounder supervisor tutor
    mentor vet nurse lawyer accountant trainer instructor client dog cat puppy kitten pet
    horse""".split()
)

_TITLES = frozenset("dr mr mrs ms miss mx prof sir".split())
# Plural roles that, said without "my" or "our", are people in general.
_PEOPLE_IN_GENERAL = frozenset("kids children".split())
# Capitalised but never who a message is about: "starts January 6" names no one.
_CALENDAR = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)
# Kin named more than one way: "Mom" and "my mum" are one person.
_KIN = {
    word: group
    for group in (
        frozenset("mom mum mother mam mommy mummy".split()),
        frozenset("dad father papa daddy".split()),
        frozenset("grandma grandmother gran granny nan nana".split()),
        frozenset("grandpa grandfather grandad granddad".split()),
    )
    for word in group
}

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

    @property
    def source(self) -> str:
        """Where the query came from, as the badge says it."""
        if not self.follow_up:
            return ""
        return "from your last message" if self.turns_back == 1 else "from earlier in this chat"


def words(text: str) -> list[str]:
    """The words of a text, apostrophes kept ("what's", "Mom's")."""
    return [w.replace("’", "'") for w in _WORD.findall(text)]


def _new_names(message: str, earlier: str) -> list[str]:
    """Capitalised words of the message (past its first word) that the earlier text lacks."""
    seen = {w.casefold().removesuffix("'s") for w in words(earlier)}
    # A word that opens a sentence ("Ha. Now make one…") is capitalised by grammar.
    openers = {m.start(1) for m in re.finditer(r"(?:^|[.!?]\s+)([A-Za-z])", message)}
    names = (
        m.group(0).removesuffix("'s").removesuffix("’s")
        for m in _WORD.finditer(message)
        if m.start() not in openers
    )
    return [w for w in names if _NAME.fullmatch(w) and w.casefold() not in seen]


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
    if any(t in _PERSON for t in tokens):
        return True
    if len(tokens) <= 8 and any(t in _THING for t in tokens):
        return True
    if len(tokens) <= 2 and tokens[0] in _ASKS:
        return True  # "Where?", "were?" (a typed "where"), "why though"
    if len(tokens) <= 10 and _names_what_was_said(message, earlier):
        return True
    fragment = len(tokens) <= _FRAGMENT_WORDS and not _VERBS.search(message)
    if fragment and re.search(r"\d", message):
        return False  # "17 * 23?" is a sum, not a fragment
    if (fragment or _OPENERS.match(message)) and len(tokens) <= 10:
        new = _new_names(message, earlier)
        return not new or bool(known and known(new))
    return False


def _content(text: str) -> list[str]:
    """The words of a text that may name a thing: not grammar, no duplicates, in order."""
    out: list[str] = []
    for w in words(text):
        key = w.casefold().removesuffix("'s")
        if key in _FUNCTION or len(key) < 2 or key in {k.casefold() for k in out}:
            continue
        out.append(w.removesuffix("'s"))
    return out


def _person(text: str) -> str:
    """The person a text is about: the last name or role it mentions ("Mom", "my manager",
    "Arlo Parks")."""
    found = ""
    tokens = words(text)
    named_at = -2  # where the last name word stood: a name of two words is one name
    for i, w in enumerate(tokens):
        key = w.casefold().removesuffix("'s")
        if key in _ROLES:
            mine = i > 0 and tokens[i - 1].casefold() in {"my", "our"}
            if key in _PEOPLE_IN_GENERAL and not mine:
                continue  # "dinosaur facts for kids" are anyone's kids; "my kids" are yours
            found = ("my " if mine else "") + w.removesuffix("'s")
        elif i > 0 and _NAME.fullmatch(w) and key not in _FUNCTION | _CALENDAR:
            name = w.removesuffix("'s")
            whole = named_at == i - 1 and not tokens[i - 1].endswith("'s")
            found = f"{found} {name}" if whole else name
            named_at = i
    return found


def mentions_person(text: str, person: str) -> bool:
    """True when `text` speaks of `person` ("Mom" in "My mum Linda…"; "my manager")."""
    key = person.casefold().removeprefix("my ").removeprefix("our ")
    # "Arlo Parks": either of the names; "Dr Anwar Qureshi": not "Dr", which the GP has too.
    names = _KIN.get(key) or set(key.split()) - _TITLES
    return any(w.casefold().removesuffix("'s") in names for w in words(text))


def about_person(texts: Sequence[str], person: str) -> list[bool]:
    """Which texts speak of `person`, by a name the others give them too.

    "When's her birthday?" after "a gift idea for Mom": "My mom Linda lives in Portland"
    is about her, and so then is "Linda's birthday is 3 March"; "Jordan's birthday is on
    June 14" is not, and answering with it names the wrong person.
    """
    direct = [mentions_person(t, person) for t in texts]
    # The names a text about the person gives them ("Linda", "Poivre" for "my dog").
    aliases = {
        w.casefold()
        for t, hit in zip(texts, direct, strict=True)
        if hit
        for w in _new_names(t, "")
        if w.casefold() not in _FUNCTION and w.casefold() not in _TITLES
    }
    return [
        hit or any(w.casefold().removesuffix("'s") in aliases for w in words(t))
        for t, hit in zip(texts, direct, strict=True)
    ]


def _referent_person(recent: Sequence[Said]) -> str:
    """Who a "she" or "their" points at: the newest person named in what was said."""
    for said in reversed(recent):
        for text in (said.user, said.query, *said.memories[:1], said.assistant):
            person = _person(text)
            if person:
                return person
    return ""


def _substitute(message: str, person: str) -> str:
    """The message with its person pronouns replaced by who they point at."""
    possessive = f"{person}'s"

    def swap(match: re.Match[str]) -> str:
        word = match.group(0).casefold()
        if word in {"his", "their", "hers", "theirs"}:
            return possessive
        if word == "her":
            # "her birthday" is possessive; "a note to her" is not.
            after = message[match.end() :].lstrip()
            return possessive if after[:1].isalpha() else person
        return person

    return re.sub(
        r"\b(?:he|him|his|she|her|hers|they|them|their|theirs)\b", swap, message, flags=re.I
    )


def _continued(message: str, recent: Sequence[Said]) -> int:
    """How many exchanges back the message continues: the last, unless it goes back."""
    if len(recent) >= 2 and not recent[-1].query and _AGAIN.search(message):
        # "What time was that again?" after a general aside returns to the memory topic.
        for back in range(2, len(recent) + 1):
            if recent[-back].query:
                return back
    return 1


def _one_person(message: str) -> str:
    """The one person a message names ("Mom", "my manager", "Jordan"), or "" for none or
    several ("Is Alex coming to Jordan's party?" is about both).

    A capitalised word that opens the sentence counts too: "Jordan wants…" names Jordan,
    and "Draft…" then only makes the message name two, so nothing is narrowed.
    """
    people = set()
    for w in words(message):
        key = w.casefold().removesuffix("'s")
        if key in _ROLES or (_NAME.fullmatch(w) and key not in _FUNCTION | _TITLES | _CALENDAR):
            people.add(key)
    return people.pop() if len(people) == 1 else ""


def resolve(message: str, recent: Sequence[Said], known: Known = None) -> Resolved:
    """The message as a standalone query, using the last exchanges (oldest first) if needed."""
    recent = list(recent)[-RECENT_TURNS:]
    if not recent:
        return Resolved(query=message, person=_one_person(message))
    back = _continued(message, recent)
    earlier = recent[-back]
    said = " ".join((earlier.user, earlier.query, earlier.assistant, *earlier.memories))
    if not leans_on_earlier(message, said, known):
        return Resolved(query=message, person=_one_person(message))
    about = earlier.query or earlier.user
    # "Now one about my dog, use his name": the message's own "my dog" comes first.
    pronoun = re.search(r"\b(?:he|him|his|she|her|hers|they|them|their|theirs)\b", message, re.I)
    own = _person(message[: pronoun.start()]) if pronoun else ""
    person = own or _referent_person(recent[: len(recent) - back + 1])
    tokens = {w.casefold() for w in words(message)}
    new = _new_names(message, said)
    if person and new:
        # "And Mum's?" after "When's Declan's birthday?": the same question, another person.
        query = re.sub(rf"\b{re.escape(person)}\b", new[0], earlier.user)
        if query != earlier.user:
            return Resolved(query, follow_up=True, turns_back=back, referent=new[0], person=new[0])
    role = _person(message)
    if person and not tokens & _PERSON and role.removeprefix("my ").casefold() in _ROLES:
        # "and my mom's?" after "When's Nandi's birthday?": the same question, someone named
        # by role; "my brother" after "When's Declan's birthday?" may be Declan, and asks
        # the same.
        query = re.sub(rf"\b{re.escape(person)}\b", role, earlier.user)
        if query != earlier.user:
            return Resolved(query, follow_up=True, turns_back=back, referent=role, person=role)
    if person and tokens & _PERSON:
        query = _substitute(message, person)
        # "they" also stands for a place or a company ("anything they serve" at Nopa), so
        # only "he" and "she" say for sure that the follow-up asks about one person.
        one = person if tokens & _ONE_PERSON else ""
        return Resolved(query, follow_up=True, turns_back=back, referent=person, person=one)
    new = [w for w in _content(about) if w.casefold() not in tokens]
    referent = " ".join(new)
    query = f"{about.strip()} {message.strip()}" if referent else message
    return Resolved(query=query, follow_up=True, turns_back=back, referent=referent)


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
    kept: dict[str, Memory] = {m.id: m for m in (*found[:FOLLOW_UP_FOUND], *earlier[:1])}
    return tuple(kept.values())


def _on_topic(resolved: Resolved, found: tuple[Memory, ...]) -> tuple[Memory, ...]:
    """What a follow-up's search found that speaks of the conversation or the message.

    "Since when?" after the penicillin allergy also finds "vegan since January 2022", and
    "where are they playing?" after Arlo Parks the netball court; the 1.5B model answered
    with those. A memory stays when it speaks of what the follow-up leans on (`referent`)
    or names a word of the query ("Am I allergic to anything they serve?" keeps the
    allergy); when none does, all stay.
    """
    texts = [m.text for m in found]
    named = {w.casefold() for w in _content(resolved.query)}
    hits = [
        about or any(w.casefold() in named for w in _content(text))
        for text, about in zip(texts, about_person(texts, resolved.referent), strict=True)
    ]
    return tuple(m for m, hit in zip(found, hits, strict=True) if hit) if any(hits) else found
