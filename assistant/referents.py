"""Who a follow-up is about: the person a "she" or "their" points at, and whom it asks about.

"When's her birthday?" after "I need a gift idea for Mom" is about Mom; "how long has she
been with us?" after "who is the head nurse" is about the nurse the reply named. Word rules
over the last exchanges, as in the resolver (assistant/followup.py) that reads them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

from assistant.gates.base import Said
from assistant.lexicon import FEMALE, FUNCTION_WORDS, MALE, NO_ONE, ROLES, SELF, TITLES
from assistant.people import (
    NO_OWNERS,
    about_person,
    is_name,
    names_in,
    one_person,
    person_in,
    typed_name,
    words,
)
from assistant.pets import (
    kind_named,
    opening_name,
    other_kind,
    own_pet,
    pet_note,
    pet_words,
    says_kind,
)
from assistant.ruled import ruled_out, without_ruled_out
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
    # Not a name the question gave: "Aoife's teacher is Ms Brennan" answers with Ms Brennan,
    # and "Kunal's girlfriend is Ritu" with Ritu, though "who's kunal's gf" typed him in
    # lower case.
    asked = {w.casefold().removesuffix("'s") for w in words(said.user)}
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
    # "and callum's?": whose, though no note spells Callum as a name. Not "the teacher's
    # name": that is the teacher of whom the conversation is about.
    told = words(message)
    owner = (
        w.casefold().removesuffix("'s")
        for i, w in enumerate(told)
        if w.endswith("'s") and (i == 0 or told[i - 1].casefold() != "the")
    )
    return (
        any(is_name(w) for w in told[1:])
        or bool(typed_name(message, spelt))
        or any(w not in NO_OWNERS for w in owner)
    )


def _whom_asked(question: str) -> str:
    """The one person a question asks about, an opening name included ("Moose has been…")."""
    person = one_person(question)
    first = words(question)[:2]
    # "What time is my Class 1 medical?": a label, not a person.
    label = len(first) > 1 and first[1][:1].isdigit()
    opening = bool(first) and first[0].casefold().removesuffix("'s") == person and not label
    return person if person and (opening or person_in(question).casefold().endswith(person)) else ""


def typed_owners(text: str) -> list[str]:
    """Whose, typed in lower case, that is no grammar, time or kin: "tomás's" is tomás."""
    owners = (w.removesuffix("'s") for w in words(text) if w.islower() and w.endswith("'s"))
    return [w for w in owners if w not in NO_OWNERS | ROLES]


def _typed_owner(question: str, said: Said) -> str:
    """Whose, typed in lower case, that what was said spells as a name: "liam's" is Liam.

    Only whose: "mortgage" is no one, though a note opens "Mortgage: Nationwide".
    """
    spelt = [w for text in (*said.memories, said.assistant) for w in words(text) if is_name(w)]
    for key in typed_owners(question):
        typed = tokenize(key)
        name = next((n for n in spelt if tokenize(n) == typed), "")
        if name:
            return name.removesuffix("'s")
    return ""


def asked_about(message: str, earlier: Said) -> str:
    """Whom a follow-up that names no one asks about: whom the question it continues asked.

    "when's the vet appointment?" after "Moose has been pawing at his mouth" asks about
    Moose's, not the other cat's; "and mine?" after Eli's practice asks about the user.
    """
    if speaks_of_user(message) or _names_someone(message, earlier):
        return ""
    # "and the teacher's name?" after "remind me what class liam's in": Liam, typed in lower
    # case. "what time's the vet?" after "is it this week?": whom that turn's query carried.
    # The query only when it put a name for a "she" or "he": "they" may be a company.
    she = pointing([w.casefold() for w in words(earlier.user)]) & ONE_PERSON
    for question in (earlier.user, earlier.query) if she else (earlier.user,):
        person = _whom_asked(question) or _typed_owner(question, earlier)
        if person:
            return person
    return ""


_HE = frozenset("he him his".split())
_SHE = frozenset("she her hers".split())


def agrees(person: str, pronoun: str) -> bool:
    """False when a pronoun cannot be the person: "he" is no one's mama, "she" no uncle."""
    key = pronoun.casefold()
    other = FEMALE if key in _HE else MALE if key in _SHE else frozenset()
    told = [w.casefold().removesuffix("'s").rstrip(".") for w in person.split()]
    return not (told and (told[-1] in other or told[0] in other))


def referent_person(recent: Sequence[Said], pronoun: str = "") -> str:
    """Who a "she" or "their" points at: the newest person named in what was said.

    An aside's notes and reply name no one the user meant: "what does she want for it?"
    after "when's Cerys bday" and "need to sort a present" is Cerys, not whoever the
    aside's reply or first note named (Dylan's birthday was found beside hers). An aside
    is an exchange that named no one and was not searched with the words of the one
    before it ("and evenings?" after "who does morning milking" carries on). Whom the
    pronoun cannot be is passed over (`agrees`).
    """
    asides: list[Said] = []
    for i in range(len(recent) - 1, -1, -1):
        said = recent[i]
        answer = next((p for p in _named_by(said) if p and agrees(p, pronoun)), "")
        if answer:
            return answer
        if i > 0 and not _searched_on_from(said, recent[i - 1]):
            asides.append(said)
            continue
        return _first_named([said, *asides], pronoun)
    return _first_named(asides, pronoun)


def _named_by(said: Said) -> Iterator[str]:
    """Whom an exchange's own words name, surest first; each is worked out only if asked."""
    spelt = (*said.memories, said.assistant)
    # "sam, not marc - the guy on the pumper": "he" is Sam.
    user = without_ruled_out(said.user, ruled_out(said.user))
    yield _answer_names(said)
    yield person_in(user)
    yield typed_name(user, spelt)
    yield _typed_owner(user, said)  # "whens julien's bday": "Julien's…" opens notes
    yield _typed_person(user, said)


# Where a word typed in lower case stands as someone: "sandeep will bring up the money",
# "tiff asked me today", "gotta ring macca about the derby". A word there that a note sent
# with the exchange also says is read as a name ("owe sandeep 4,200 for sunburn tickets").
_OPENS = r"^\W*(?:(?:ugh|so|and|but|lol|ok|okay|omg|oh|well|btw|also|hmm|yeah|ya|hey)\W+)*"
_DOES = (
    r"is|was|will|wont|won't|has|hasnt|hasn't|had|still|just|asked|asks|says|said|wants|"
    r"wanted|keeps|never|always|can|cant|can't|didnt|didn't|doesnt|doesn't|got|gets|needs|"
    r"owes|paid|texted|called|rang|came|comes|left|told|thinks|reckons"
)
_TYPED_PERSON = re.compile(
    rf"{_OPENS}([a-z][a-z'’-]+)\s+(?:{_DOES})\b"
    # The verb after what makes it one: "need to text bri", not "my ring size", "a call back".
    r"|\b(?:to|gotta|gonna|wanna|must|should|will|ill|i'll|i['’]ll|pls|please)\s+"
    r"(?:ring|call|text|message|email|tell|ask|pay|remind|phone)\s+([a-z][a-z'’-]+)\b"
)
# Words that point back at someone said before.
PERSON_PRONOUNS = frozenset("he him his she her hers they them their theirs".split())
ONE_PERSON = frozenset("he him his she her hers".split())
_NO_NAME = FUNCTION_WORDS | NO_ONE | ROLES | SELF | TITLES | NO_OWNERS | PERSON_PRONOUNS


def _typed_person(user: str, said: Said) -> str:
    """Someone typed in lower case where a person stands, whom a note sent also names."""
    noted = {w.casefold() for text in said.memories for w in words(text)}
    for typed in _TYPED_PERSON.finditer(user):
        word = (typed[1] or typed[2]).removesuffix("'s")
        if word not in _NO_NAME and not pet_words("pet") & set(tokenize(word)) and word in noted:
            return word
    return ""


def _searched_on_from(said: Said, before: Said) -> bool:
    """True when an exchange was searched with the words of the one before it."""
    return bool(said.query) and before.user.casefold() in said.query.casefold()


def _first_named(exchanges: Sequence[Said], pronoun: str = "") -> str:
    """The first person named by an exchange's query, first note or reply, in order.

    Or the pet it spoke of, by the name its notes give: "his food" after "how often should
    a beagle be fed?" is Bruno's, whose note said "Bruno (our beagle) vet = Dr. Farida",
    not the vet's.
    """
    for said in exchanges:
        kind = kind_named(said.user)
        pet = _pet_name([t for t in said.memories if pet_note(t, kind)], kind) if kind else ""
        if pet:
            return pet
        for text in (said.query, *said.memories[:1], said.assistant):
            person = person_in(text)
            if person and agrees(person, pronoun):
                return person
    return ""


# "what currency do they use in Poland?", "what language do they speak there?": "they" are
# the people of a place, no one the chat named. Swapped for the hotel the chat was on, the
# 1.5B model answered "Memmo uses the euro".
_PEOPLE_THERE = re.compile(
    r"\b(?:do|does|did|would|will|can|could)\s+they\s+(?:\w+\s+)?(?:use|speak|call|say|eat|"
    r"drink|drive|spend|pay|celebrate|play|wear|write)\b.*\b(?:in|there)\b",
    re.IGNORECASE,
)


# "how much were they?" after "got jade's school shoes sorted": "they" are the shoes, priced,
# not Jade; swapped for a person ("how much were teacher?"), the search found teachers.
_PRICED = re.compile(
    r"\bhow much (?:were|are|was|is|did|do) (?:they|them|those|these)\b(?! (?:charg|pay|owe))"
    r"|\b(?:they|those|these) cost\b",
    re.IGNORECASE,
)


def priced_things(message: str) -> bool:
    """True when "they" in the message are things with a price: "how much were they?"."""
    return bool(_PRICED.search(message))


def said_words(message: str) -> list[str]:
    """The message's words in lower case, less a "they" that is the people of a place."""
    told = [w.casefold() for w in words(message)]
    return [w for w in told if w != "they"] if _PEOPLE_THERE.search(message) else told


def pointing(tokens: set[str] | list[str]) -> set[str]:
    """The person pronouns among some words, contracted ones too ("she's", "they're")."""
    return {t.split("'")[0] for t in tokens} & PERSON_PRONOUNS


def substitute(message: str, person: str) -> str:
    """The message with its person pronouns replaced by who they point at."""
    possessive = f"{person}'s"

    def swap(match: re.Match[str]) -> str:
        word, contracted = match.group(1).casefold(), match.group(2) or ""
        if word in {"his", "their", "hers", "theirs"}:
            return possessive
        if word == "her":
            # "her birthday" is possessive; "a note to her" is not.
            after = message[match.end() :].lstrip()
            return possessive if after[:1].isalpha() else person
        # "they're coming" is "Rami and Dana are coming"; "she's turning" stays "Mom's turning".
        return person + _SPELT_OUT.get(contracted[1:].casefold(), contracted)

    return re.sub(
        r"\b(he|him|his|she|her|hers|they|them|their|theirs)(['’](?:re|ve|ll|d|s)\b)?\b",
        swap,
        message,
        flags=re.I,
    )


_SPELT_OUT = {"re": " are", "ve": " have", "ll": " will"}


# "Our dog is Biscuit", "my cat Mielie (tabby)", "Farm dog is Rusty", "a black lab called
# Poivre": the note says which name is the pet's.
_PET_IS = re.compile(
    r"\b(?:(?i:dog|cat|puppy|pup|kitten|rabbit|bunny|hamster|tortoise|turtle|budgie|parrot|pony)"
    r"\s*(?:is called|is named|is|called|named|,|-|:|=)?|called|named)\s+([A-Z][\w'’-]+)"
)


def _pet_name(notes: Sequence[str], kind: str) -> str:
    """The name notes about the user's pet give it: said as theirs, else the one most use."""
    for note in notes:
        said = _PET_IS.search(note)
        if said and is_name(said.group(1)):
            return said.group(1)
    skip = FUNCTION_WORDS | NO_ONE | TITLES | ROLES
    said_of_pets = pet_words(kind)
    for note in notes:
        name = opening_name(note, kind)
        mere = name.casefold() in skip or set(tokenize(name)) & said_of_pets  # "Booster jab…"
        if len(name) >= 3 and name.isalpha() and not mere:
            return name[:1].upper() + name[1:] if name.islower() else name
    counts: Counter[str] = Counter()
    for note in notes:
        said = words(note)
        names: set[str] = set()
        for i, w in enumerate(said):
            name = w.removesuffix("'s")
            # Not "Dr Okafor", nor "Pollok Vets" or "Black Hawk": a vet's or a brand's name.
            beside = [said[j] for j in (i - 1, i + 1) if 0 <= j < len(said)]
            if (
                not is_name(w)
                or name.casefold() in skip
                or set(tokenize(w)) & said_of_pets
                or any(is_name(b) or b.casefold().rstrip(".") in TITLES for b in beside)
            ):
                continue
            names.add(name)
            # A note's first word is what it is about ("Chorizo vet - Dr. Okafor…").
            counts[name] += i == 0
        counts.update(names)  # once a note
    # In two notes, or opening one: "Whiskas" in "cat litter and Whiskas" is a brand.
    best = max(counts, key=counts.__getitem__, default="")
    return best if counts[best] >= 2 else ""


def _of_the_pet(note: str, kind: str) -> bool:
    """True for a note about the user's pet of this kind, or one that names a pet of it."""
    said = _PET_IS.search(note)
    named = bool(said) and says_kind(said[0], kind)
    return named or pet_note(note, kind) or bool(opening_name(note, kind))


def pet_named(message: str, memories: Sequence[str]) -> str:
    """The message with "my dog" as "my dog Chorizo", when notes given name the pet; else "".

    "now one about my dog, use his name" after a joke was sent Chorizo's vet note, and the
    1.5B model's joke was about "Max": nothing told it the note's Chorizo is the dog.
    """
    asked = own_pet(message)
    if asked is None:
        return ""
    kind = asked.group(1).casefold()
    name = _pet_name([t for t in memories if _of_the_pet(t, kind)], kind)
    if not name or name.casefold() in message.casefold():
        return ""
    # The cat's vet note names the dog too when both go to the vet: "Kluska booster jab".
    if any(
        name in {w.removesuffix("'s") for w in words(t)} and other_kind(t, kind) for t in memories
    ):
        return ""
    return f"{message[: asked.end()]} {name}{message[asked.end() :]}"
