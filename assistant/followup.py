"""Follow-ups: a message that leans on the last turns, resolved into a standalone query.

"When's her birthday?" after "I need a gift idea for Mom" is searched as "When's Mom's
birthday?", and "What time?" after "When am I meeting Alex?" as "When am I meeting Alex?
What time?". No model call: word rules over the message and the last three exchanges,
a fraction of a millisecond. A message with no sign of leaning on them (a topic switch,
"What's the capital of Australia?") is left to be judged on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.asides import Personal, back_on, back_past_digression, is_aside, surely_personal
from assistant.asked import ASKED_FOR, QUESTION_WORDS
from assistant.gates.base import Said
from assistant.lexicon import ROLES, SELF
from assistant.people import (
    content_words,
    is_name,
    is_question,
    new_names,
    one_person,
    person_in,
    words,
)
from assistant.referents import (
    ONE_PERSON,
    asked_about,
    pointing,
    priced_things,
    referent_person,
    said_words,
    substitute,
)
from assistant.typed import Known, led_by, typed_before, typed_whose
from assistant.used import reply_used

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
_REACTION_WORDS = _SMALL_TALK | {"grand", "lovely", "ha"}
_REACTIONS = "|".join(sorted(_REACTION_WORDS))
_REACTION_AND = re.compile(
    rf"^(?:\s*(?:{_REACTIONS})\b[\s.,!]*)+(?:and|also|plus|what about|how about)\b",
    re.IGNORECASE,
)

# A longer message that ends on "that" or "it" still points back ("…ask about that?").
_LONG_POINTER_WORDS = 14
# "was it a big hit when it came out?": "it" is what was said (alone, the gate: p=1.00).
_IT_ASKED = re.compile(
    r"^\W*(?:(?:ok|so|and|but|hmm)\W+)?(?:was|is|were|did|does|has|had|will|would|can|could)"
    r"\s+it\b",
    re.IGNORECASE,
)
_DEFINITE = re.compile(r"\b(?:the|that|those)\s+([A-Za-z][a-z-]{2,})\b", re.IGNORECASE)
_BACK = re.compile(r"\b(?:back to|going back|returning to)\b", re.IGNORECASE)
_BACK_WORDS = 20
# A question that opens by going back ("ok back to the appt - what time?") leans on an
# earlier exchange even when it names the topic in words that exchange never used.
_GOES_BACK = re.compile(r"^\W*(?:(?:ok|okay|so|anyway|right|alright|but|sorry)\W+)?back to\b", re.I)
_AGAIN = re.compile(r"\b(?:again|earlier|before|back to|the first|that one)\b", re.IGNORECASE)
# "now one about my bossy hen, use her name": "her" is the hen the message itself names, not
# whoever the joke before it spoke of ("use Ollama's name", "use dad's name" after a dad joke).
_NAMED_HERE = re.compile(
    r"\b(?:about|for)\s+((?:my|our|the)\s+[^,.;:!?]+?)\s*[,;:.-]?\s*(?:and\s+)?"
    r"(?:use|put|say|give|include|using|with)\s+(?:his|her|their|its)\s+name\b",
    re.IGNORECASE,
)


# A question this short with no subject of its own carries on with the last search.
_IMPLICIT_WORDS = 8
_OWNED = frozenset("my our your mine ours yours".split())


def own_words(text: str) -> list[str]:
    """The words a text names of its own, beside what it asks for: "which day?" names none."""
    return [w for w in content_words(text) if w.casefold() not in ASKED_FOR | QUESTION_WORDS]


def carries_on(message: str) -> bool:
    """True for a short question that names no one and nothing of the user's own.

    "how much am I paying now?" after the photo business insurance, "what time's the
    appointment?" after "Getting ready for the dentist in Hinton": no word the rules above
    see, and alone the search found the mortgage and the dog's vet visit. "what's my
    mortgage?" and "how many teeth does an adult cat have?" say what they are about.
    """
    said = words(message)
    tokens = {w.casefold() for w in said}
    if not said or len(said) > _IMPLICIT_WORDS or not is_question(message):
        return False
    if re.search(r"\d", message) or tokens & (_OWNED | ROLES):
        return False
    if any(is_name(w) for w in said[1:]):
        return False
    own = own_words(message)
    return len(own) <= 2


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
    # It showed no sign of leaning on the last exchange, but has no subject of its own
    # (`carries_on`): searched with that exchange's words only if the gate retrieves it.
    implicit: bool = False

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
    tokens = said_words(message)
    if not tokens or tokens[0] in _SMALL_TALK and len(tokens) <= 3:
        return False
    if pointing(tokens):
        return True
    if len(tokens) <= 8 and any(t in _THING for t in tokens):
        return True
    if len(tokens) <= _LONG_POINTER_WORDS and tokens[-1] in _THING:
        return True  # "Who on my team should I ask about that?": it ends on what was said
    if len(tokens) <= _LONG_POINTER_WORDS and _IT_ASKED.match(message) and is_question(message):
        return True  # "was it a big hit when it came out?": the question is about "it"
    if len(tokens) <= 2 and tokens[0] in QUESTION_WORDS:
        return True  # "Where?", "were?" (a typed "where"), "why though"
    if _GOES_BACK.match(message) and is_question(message):
        return True
    # "ok back to the camping trip, which day do we come home?" says it goes back, at any
    # length up to a sentence.
    limit = _BACK_WORDS if _BACK.search(message) else 10
    if len(tokens) <= limit and _names_what_was_said(message, earlier):
        return True
    new = switched_to(message, earlier)
    if new is None:
        return False
    return not new or bool(known and known(new))


def switched_to(message: str, earlier: str) -> list[str] | None:
    """The names a short fragment or "and …" brings that `earlier` lacks; None for neither.

    "And the capital of France?" after Spain's: ["France"], a switch; "What time?": [].
    """
    tokens = words(message)
    fragment = len(tokens) <= _FRAGMENT_WORDS and not _VERBS.search(message)
    if fragment and re.search(r"\d", message):
        return None  # "17 * 23?" is a sum, not a fragment
    opener = _OPENERS.match(message) or _REACTION_AND.match(message)
    if (fragment or opener) and len(tokens) <= 10:
        return new_names(message, earlier)
    return None


# What a nod is made of: "ok cool", "thanks!", "got it", "lol ok".
_NODS = _REACTION_WORDS | {"got", "it", "right", "alright", "cheers", "ta"}


def _acknowledged(said: Said) -> bool:
    """True for an exchange that only nodded ("ok cool"): a follow-up goes past it."""
    tokens = said_words(said.user)
    return bool(tokens) and len(tokens) <= 4 and set(tokens) <= _NODS and not said.query


def _continued(message: str, recent: Sequence[Said], personal: Personal = None) -> int:
    """How many exchanges back the message continues: the last, unless it goes back.

    Past a general aside, a question that reads alone as surely about the user's life
    (`personal`) goes back to the newest exchange that searched: "whats the confirmation
    number for it?" after the Québec hotel and "random q, what river runs past québec
    city?" asks the hotel's, and "ok and by which day do i have to pay it?" after the rent
    and "why is berlin called berlin" the rent's. "and how high is it?" after "what's the
    tallest mountain in Africa?" reads alone as general, and stays with the aside.
    """
    if len(recent) < 2:
        return 1
    if _acknowledged(recent[-1]):
        # "where?" after "wednesday football still on?" and "ok cool" asks where football is.
        return 1 + _continued(message, recent[:-1], personal)
    # The newest earlier exchange that searched, past the last one; 0 for none.
    searched = next((b for b in range(2, len(recent) + 1) if recent[-b].query), 0)
    if _BACK.search(message):
        # "ok back to his birthday" leaves the last exchange, even an aside that was
        # searched ("a good first truck" found the user's truck, whose "Transmission's
        # starting to slip" became "his"): the newest earlier turn that searched.
        return searched or 2
    # "ok and the aside's X?" stays with it: "the population" after "btw what's the capital".
    aside = _names_what_was_said(message, recent[-1].everything())
    if searched and not aside and back_past_digression(message, recent[-1], personal):
        return searched
    if not is_aside(recent[-1], personal):
        return 1
    # "What time was that again?" after a general aside returns to the memory topic, and so
    # does "ok and what time was the appt?" after "what is afib exactly": "the appt" is
    # what the memory turn spoke of, not the aside.
    for back in range(2, len(recent) + 1):
        if recent[-back].query and (
            _AGAIN.search(message)
            or not aside
            and (
                _names_what_was_said(message, recent[-back].everything())
                or back_on(message, recent[-back], recent[-1])
            )
        ):
            return back
    if searched and not aside and surely_personal(message, personal):
        return searched
    return 1


def _carried_on(message: str, recent: Sequence[Said]) -> int:
    """How many exchanges back a question with no subject of its own carries on, or 0.

    The last search, when its reply used a fact or spoke of what was asked: after "None
    match." the conversation is on no fact, and its memories were the wrong ones; after
    "We have a trip planned for Québec with Julie." it is on that trip. Past general asides
    too: "how much is the fee?" after the NMBI renewal and "what's the capital of vietnam?"
    asks the NMBI fee, as long as the aside itself said nothing of it.
    """
    if not carries_on(message):
        return 0
    for back in range(1, len(recent) + 1):
        earlier = recent[-back]
        if earlier.query:
            used = reply_used(earlier.memories, earlier.assistant, earlier.user)
            asked = {w.casefold() for w in content_words(earlier.query)}
            echoed = any(w.casefold() in asked for w in content_words(earlier.assistant))
            return back if used or echoed else 0
        # "what's the population of hanoi?" after "what's the capital of vietnam?" asks on.
        aside = {w.casefold() for w in words(earlier.everything())}
        if any(w.casefold() in aside for w in content_words(message)):
            return 0
    return 0


def _asks_which(message: str, role: str) -> bool:
    """True when the message asks which one the role is, or says it is theirs: "and with which
    doctor?" after "what time is my GP appt" asks about the appointment, and "and the
    teacher's name?" after "what class liam's in" about Liam's teacher."""
    word = role.split()[-1] if role else ""
    asks = rf"\b(?:which|what|whose|the)\s+{re.escape(word)}\b"
    return bool(word) and bool(re.search(asks, message, re.I))


def resolve(
    message: str, recent: Sequence[Said], known: Known = None, personal: Personal = None
) -> Resolved:
    """The message as a standalone query, using the last exchanges (oldest first) if needed."""
    recent = list(recent)[-RECENT_TURNS:]
    if not recent:
        return Resolved(query=message, person=one_person(message))
    back = _continued(message, recent, personal)
    earlier = recent[-back]
    said = earlier.everything()
    about = earlier.query or earlier.user
    tokens = set(said_words(message))
    # The earlier words a follow-up searched with them brings in.
    referent = " ".join(w for w in content_words(about) if w.casefold() not in tokens)
    if not leans_on_earlier(message, said, known):
        back = _carried_on(message, recent)
        if back:
            earlier = recent[-back]
            about = earlier.query
            query = f"{about.strip()} {message.strip()}"
            referent = " ".join(w for w in content_words(about) if w.casefold() not in tokens)
            # "when's the birthday?" after "sorting out presents for my niece": the niece's.
            person = asked_about(message, earlier)
            return Resolved(query, True, back, referent=referent, person=person, implicit=True)
        return Resolved(query=message, person=one_person(message))
    # "Now one about my dog, use his name": the message's own "my dog" comes first.
    pronoun = re.search(r"\b(?:he|him|his|she|her|hers|they|them|their|theirs)\b", message, re.I)
    asked = f"{earlier.user} {earlier.query}"
    own = ""
    # Said in the message and no one's role: "my bossy hen", "the guy on my crew who does the
    # engine". The message's own words say whom "her" means, and go to the reply model as such.
    here = ""
    if pronoun:
        before = message[: pronoun.start()]
        own = person_in(before) or led_by(message, asked, known) or typed_before(before, known)
        if not own:
            named = _NAMED_HERE.search(message)
            own = here = named[1] if named else ""
    person = own or referent_person(recent[: len(recent) - back + 1], pronoun[0] if pronoun else "")
    # Names the earlier question did not ask about: "And Aoife's?" after "When's Oisín's
    # birthday?" asks the same of Aoife, even when that turn's memories named her. Only in
    # a few words: "Why did Mike move to Alaska?" is a question of its own.
    new = new_names(message, asked) or typed_whose(message, asked, known)
    if person and new and len(tokens) <= _FRAGMENT_WORDS:
        # "And Mum's?" after "When's Declan's birthday?": the same question, another person;
        # "and mai's?" after "whats bao's teacher's name": Mai's teacher's, not Mai's name.
        whose = person.split("'s ")[0]
        # "what about Kasia's mum?" after "when is Marek's birthday": Kasia's mum's birthday.
        said = person_in(message)
        whom = said if said.casefold().startswith(f"{new[0]}'s ".casefold()) else new[0]
        query = re.sub(rf"\b{re.escape(whose)}\b", whom, earlier.user, flags=re.I)
        if query != earlier.user:
            return Resolved(query, True, back, referent=whom, person=whom, rewritten=True)
    role = person_in(message)
    # Only a fragment or an "and …" asks the same again: "when am I going there with my
    # daughter?" after "what's the capital of Portugal?" is a question of its own.
    again = switched_to(message, asked) is not None and not _asks_which(message, role)
    if person and again and not pointing(tokens) and role.removeprefix("my ").casefold() in ROLES:
        # "and my mom's?" after "When's Nandi's birthday?": the same question, someone named
        # by role; "my brother" after "When's Declan's birthday?" may be Declan, and asks
        # the same.
        query = re.sub(rf"\b{re.escape(person)}\b", role, earlier.user, flags=re.I)
        if query != earlier.user:
            return Resolved(query, True, back, referent=role, person=role, rewritten=True)
    if person and pointing(tokens) and not priced_things(message):
        query = substitute(message, person)
        # "they" also stands for a place or a company ("anything they serve" at Nopa), so
        # only "he" and "she" say for sure that the follow-up asks about one person.
        one = person if pointing(tokens) & ONE_PERSON else ""
        return Resolved(query, True, back, referent=person, person=one, rewritten=not here)
    query = f"{about.strip()} {message.strip()}" if referent else message
    own = own_words(message)
    person = asked_about(message, earlier)
    # "and us?", "and mine?": the same question about someone else, not the same fact.
    bare = not own and not tokens & SELF
    return Resolved(query, True, back, referent=referent, person=person, bare=bare)
