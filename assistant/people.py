"""Who or what a text names: names, roles and kin, and the words that never name anything.

The follow-up resolver (assistant/followup.py) reads these to find who "she" points at
and which memories speak of them. Word rules only, no model call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.lexicon import FUNCTION_WORDS, KIN, NO_ONE, PEOPLE_IN_GENERAL, ROLES, TITLES
from assistant.pets import kind_asked, pet_note
from memory.tokens import tokenize, unaccented

# Letters of any alphabet: "Oisín's" is one word, not "Ois" and "n's".
_WORD = re.compile(r"[^\W\d_][\w'’]*|\d[\w:.,]*")


# "in Wisconsin", "at Nopa": after these a capitalised word is a place. Not "to" or
# "from": "a note to Sam", "a letter from Sam".
_PLACE_WORDS = frozenset("in at near".split())
# "Jake Brenner, the neighbor kid, helps…": the words after the comma describe the name.
_APPOSITION = re.compile(r"(\b[A-Z][^\W\d_]+), (?:the|a|an|my|our) [^,.;:!?]{1,40}")


def is_name(word: str) -> bool:
    """A word shaped like a name: "Maya", "Mom's", "Oisín"; not "MSc", "Q3" or "NHS"."""
    base = word.removesuffix("'s").removesuffix("’s")  # "O'Leary" and "McCarthy" are names
    base = re.sub(r"^(?:O['’]|D['’]|Mc)(?=[A-Z]\w)", "", base)
    return len(base) >= 2 and base[0].isupper() and base[1:].isalpha() and base[1:].islower()


def words(text: str) -> list[str]:
    """The words of a text, apostrophes kept ("what's", "Mom's")."""
    return [w.replace("’", "'") for w in _WORD.findall(text)]


def new_names(message: str, earlier: str) -> list[str]:
    """Capitalised words of the message (past its first word) that the earlier text lacks."""
    seen = {w.casefold().removesuffix("'s") for w in words(earlier)}
    # A word that opens a sentence ("Ha. Now make one…") is capitalised by grammar.
    openers = {m.start(1) for m in re.finditer(r"(?:^|[.!?]\s+)([^\W\d_])", message)}
    names = (
        m.group(0).removesuffix("'s").removesuffix("’s")
        for m in _WORD.finditer(message)
        if m.start() not in openers
    )
    return [w for w in names if is_name(w) and w.casefold() not in seen]


def content_words(text: str) -> list[str]:
    """The words of a text that may name a thing: not grammar, no duplicates, in order."""
    out: list[str] = []
    for w in words(text):
        key = w.casefold().removesuffix("'s")
        if key in FUNCTION_WORDS or len(key) < 2 or key in {k.casefold() for k in out}:
            continue
        out.append(w.removesuffix("'s"))
    return out


def person_in(text: str) -> str:
    """The person a text is about: the last name or role it mentions ("Mom", "my manager",
    "Arlo Parks")."""
    found = ""
    tokens = words(_APPOSITION.sub(r"\1", text))

    def numbered(i: int) -> bool:
        # "Class 1", "Ward 7B", "Room 4": a label, not a person.
        return i + 1 < len(tokens) and tokens[i + 1][:1].isdigit()

    def modifier(i: int) -> bool:
        # "my partner on the Maligne patrols": a name before a thing names the thing.
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        return tokens[i - 1].casefold() == "the" and after.islower() and after not in FUNCTION_WORDS

    named_at = -2  # where the last name word stood: a name of two words is one name
    placed_at = -2  # where the last word of a place stood ("in New York")
    # "mamas birthday": typed without its apostrophe, kin's "s" is whose ("mama's").
    tokens = [f"{w[:-1]}'s" if w[:-1].casefold() in KIN and w[-1:] == "s" else w for w in tokens]
    for i, w in enumerate(tokens):
        key = w.casefold().removesuffix("'s")
        if key in ROLES:
            mine = i > 0 and tokens[i - 1].casefold() in {"my", "our"}
            if key in PEOPLE_IN_GENERAL and not mine:
                continue  # "dinosaur facts for kids" are anyone's kids; "my kids" are yours
            # The name whose role it is, one word between at most ("Tyler's FFA advisor").
            owner = tokens[named_at] if named_at >= 0 and i - named_at <= 2 else ""
            if owner.endswith("'s"):
                # "Aoife's teacher" is one person, and not "Oisín's teacher".
                found = owner + " " + w.removesuffix("'s")
                continue
            typed = tokens[i - 1] if i > 0 else ""
            if typed.islower() and typed.endswith("'s") and _owner(typed.removesuffix("'s")):
                # "murat's wife", typed in lower case, is Murat's, and "her baby" is hers.
                # "njeri's doctor appt" is Njeri's appointment, and "she" is Njeri.
                after = tokens[i + 1] if i + 1 < len(tokens) else ""
                # A role before a thing, not one owning it ("bao's teacher's name").
                thing = not w.endswith("'s") and after.islower() and after not in FUNCTION_WORDS
                role = w.removesuffix("'s")
                found = typed.removesuffix("'s") if thing else f"{typed} {role}"
                continue
            found = ("my " if mine else "") + w.removesuffix("'s")
        elif (i > 0 or w.endswith("'s")) and is_name(w) and key not in FUNCTION_WORDS | NO_ONE:
            # "Zara's had another flare up": a possessive opening a sentence is a name too.
            if numbered(i):
                continue
            placed = i > 0 and (tokens[i - 1].casefold() in _PLACE_WORDS or modifier(i))
            if placed or placed_at == i - 1:
                placed_at = i  # "a house in Wisconsin": a place, never who "he" is
                continue
            name = w.removesuffix("'s")
            whole = named_at == i - 1 and not tokens[i - 1].endswith("'s")
            found = f"{found} {name}" if whole else name
            named_at = i
    return found


# Whose "'s" is grammar or time, no one's: "what time's the vet?", "today's date".
NO_OWNERS = FUNCTION_WORDS | frozenset(
    "who time day date week month year today tomorrow tonight yesterday world everyone "
    "someone somebody nobody".split()
)
# Nor, before a role, a group's: "the team's coach", "the school's nurse".
_GROUPS = frozenset("team school class club".split())


def _owner(key: str) -> bool:
    """True for a lower-case word before "'s" that can be someone: "murat", not "today"."""
    return key.isalpha() and key not in NO_OWNERS | NO_ONE | ROLES | _GROUPS


def names_in(text: str) -> list[str]:
    """The names a text gives, in order, a name of several words as one ("Zanele Mokoena")."""
    runs: list[list[str]] = []
    last = -2
    for i, w in enumerate(words(text)):
        key = w.casefold().removesuffix("'s")
        if not is_name(w) or key in FUNCTION_WORDS | NO_ONE | TITLES | ROLES:
            continue
        if last == i - 1 and not runs[-1][-1].endswith("'s"):
            runs[-1].append(w.removesuffix("'s"))
        else:
            runs.append([w.removesuffix("'s")])
        last = i
    return [" ".join(run) for run in runs]


def _bare(person: str) -> str:
    """A person as looked up: lower case, without "my", "our" or accents ("my Mom" -> "mom")."""
    return unaccented(person).removeprefix("my ").removeprefix("our ")


def mentions_person(text: str, person: str) -> bool:
    """True when `text` speaks of `person` ("Mom" in "My mum Linda…"; "my manager")."""
    # "Aoife's teacher": a text about her teacher names Aoife ("Aoife's teacher is Ms Brennan").
    key = _bare(person).split("'s ")[0]
    # "Arlo Parks": either of the names; "Dr Anwar Qureshi": not "Dr", which the GP has too.
    names = KIN.get(key) or set(key.split()) - TITLES
    # "liams bday": notes drop the apostrophe of a possessive, and "lukasz" the accent. But
    # "Tom's mum Linda" is someone else's mum, not "my mum" or "Mum" (a "teacher" may be
    # "Liam's teacher").
    told = words(text)
    other = person.casefold().startswith(("my ", "our ")) or key.casefold() in KIN
    said = (
        unaccented(w).removesuffix("'s")
        for i, w in enumerate(told)
        if not (other and i and told[i - 1].endswith("'s"))
    )
    return any(w in names or w.removesuffix("s") in names for w in said)


def _by_role(person: str) -> bool:
    """True for someone named by a role or kin ("Mom", "my dog"), not by a name."""
    return _bare(person) in ROLES | KIN.keys()


# "camille (our daughter) is 9", "kyle, our neighbour, feeds…": a terse note's name, in
# lower case, with the role it has beside it.
_NAMED_ROLE = re.compile(
    r"\b([^\W\d_][\w'’-]+)(?:\s*\(\s*|,\s+)(?:my|our|the)\s+([^\W\d_]+)\s*[),]"
)


def _names_given(text: str, role: str = "") -> list[str]:
    """The names a text gives, past the word that opens a sentence ("our son Idris" -> Idris).

    A name given with its role comes first ("camille (our daughter)"), only for `role` if set.
    """
    named = [
        name.removesuffix("'s")
        for name, said in _NAMED_ROLE.findall(text)
        if said.casefold() in ROLES
        and (not role or said.casefold() == role)
        and name.casefold() not in FUNCTION_WORDS | ROLES
    ]
    # "Mom turns 79, need to send flowers from Lyon": Lyon is where, not another name of hers,
    # and "My best friend in Lyon…" is not about her.
    places = {w for run in _PLACED.findall(text) for w in re.split(r"[\s-]", run)}
    capitalised = new_names(text, "")
    skip = FUNCTION_WORDS | TITLES | NO_ONE
    return named + [w for w in capitalised if w.casefold() not in skip and w not in places]


def typed_name(message: str, texts: Sequence[str]) -> str:
    """The last name the message types in lower case that the texts spell as a name.

    "and isla?" after "how old's tomás now" asks about Isla ("Isla is 9 and Tomás is 6"),
    not Tomás; "when am I flying" is not about "Flying home to Mombasa…", whose opening word
    is capitalised by grammar, nor "lyon" about a place ("…flowers from Lyon").
    """
    # Compared as the keyword index reads words: "tomas" is "Tomás".
    spelt = {
        tuple(tokenize(w)): w
        for text in texts
        for w in _names_given(text)
        if w.casefold() not in ROLES | FUNCTION_WORDS
    }
    spelt.pop((), None)
    told = words(message)
    for i in range(len(told) - 1, -1, -1):
        w = told[i]
        name = spelt.get(tuple(tokenize(w))) if w.islower() else None
        # "marek's address in manchester": a place, as a capitalised word after "in" is.
        placed = i > 0 and told[i - 1].casefold() in _PLACE_WORDS
        if name and w not in FUNCTION_WORDS and not placed:
            # The whole name it is part of: "which captain…" is Captain Rory Doyle.
            clauses = (c for text in texts for c in re.split(r"[,.;:!?()]", text))
            runs = (run for c in clauses for run in names_in(c) if name in run.split())
            return next(runs, name)
    return ""


# "Budgie = Brian Hogan from Quin…": a terse note's "=" puts a word for someone before
# their name; "everyone calls her Bia", "aka Fitzy" give one after it.
_EQUALS = re.compile(r"^\s*([^\W\d_][\w'’-]*)\s*=\s*((?:[A-Z][^\W\d_'’]+\s?){1,3})")
_CALLED = re.compile(
    r"\b(?:calls? (?:her|him|them)|aka|known as|nicknamed)\s+([^\W\d_][\w'’-]+)", re.IGNORECASE
)


def _also_called(text: str) -> list[str]:
    """The other names a note says someone goes by, words of both sides of an "=" included."""
    out = [m.group(1) for m in _CALLED.finditer(text)]
    equals = _EQUALS.match(text)
    if equals:
        out += [equals.group(1), *equals.group(2).split()]
    return [w for w in out if w.casefold() not in FUNCTION_WORDS | ROLES | TITLES]


_PLACED = re.compile(r"\b(?:in|at|near|from|to)\s+((?:[A-Z][^\W\d_'’]+[\s-]?)+)")


def _plural(names: set[str]) -> set[str]:
    return {f"{name}s" for name in names}


def about_person(texts: Sequence[str], person: str) -> list[bool]:
    """Which texts speak of `person`, by a name the others give them too.

    "When's her birthday?" after "a gift idea for Mom": "My mom Linda lives in Portland"
    is about her, and so then is "Linda's birthday is 3 March"; "Jordan's birthday is on
    June 14" is not, and answering with it names the wrong person.
    """
    # "my dog": "Biscuit (beagle) booster" is about him, and "dog walker Chloé" is not.
    kind = kind_asked(person)
    direct = [pet_note(t, kind) if kind else mentions_person(t, person) for t in texts]
    if _by_role(person):
        # The names a text about the person gives them ("Linda", "Poivre" for "my dog").
        aliases = {
            unaccented(w)
            for t, hit in zip(texts, direct, strict=True)
            if hit
            for w in _names_given(t)
        }
    else:
        # Someone named has their name: "Niamh and I have two kids: Oisín… and Aoife…"
        # speaks of Aoife, and must not make Oisín another name of hers. Only a note that
        # says so gives another: "Budgie = Brian Hogan", "Beatriz (everyone calls her Bia)".
        hits = (t for t, hit in zip(texts, direct, strict=True) if hit)
        aliases = {unaccented(w) for t in hits for w in _also_called(t)} - {_bare(person)}
        if not aliases:
            return direct
    # "camilles bday": notes drop the apostrophe of a possessive.
    return [
        hit or any(unaccented(w).removesuffix("'s") in aliases | _plural(aliases) for w in words(t))
        for t, hit in zip(texts, direct, strict=True)
    ]


_QUESTION_WORDS = frozenset(
    "who whos who's what whats what's when whens when's where wheres where's which why how "
    "is are was were do does did can could will would should has have anything any".split()
)


def is_question(text: str) -> bool:
    """True for a question ("anything I should avoid for my son?"), not a request."""
    first = words(text)[:1]
    return text.rstrip().endswith("?") or (bool(first) and first[0].casefold() in _QUESTION_WORDS)


REQUEST = re.compile(
    r"\b(?:can you|could you|would you|please (?:help|write|tell|explain|fix)|help me)\b",
    re.IGNORECASE,
)
# A message that opens with a command or a question word asks for something: it states
# nothing about the user ("Tell me a joke", "Plan my weekend", "what's 2+2").
ASKS = re.compile(
    r"^\s*(?:please\s+)?(?:tell|write|give|show|explain|make|plan|list|help|find|suggest|"
    r"recommend|describe|summari[sz]e|translate|create|draft|compose|generate|calculate|"
    r"compute|convert|compare|name|define|teach|play|sing|draw|imagine|pretend|let'?s|"
    r"what|what'?s|whats|who|who'?s|when|where|why|how|which|can|could|would|will|should|"
    r"do|does|did|is|are|was|were|am)\b",
    re.IGNORECASE,
)


def asks_something(text: str) -> bool:
    """True for a question, a request or a command; false for a remark: "storeroom's locked"."""
    return is_question(text) or bool(ASKS.match(text) or REQUEST.search(text))


def by_their_name(query: str, person: str, memories: Sequence[str]) -> str:
    """The query asked again by the name the memories give someone named by role, or "".

    "anything I should avoid for my son specifically?" finds "our son Idris is 3", but
    not "Idris is allergic to tree nuts": memories name people by name more often than a
    message does. Asked again as "anything I should avoid for Idris specifically?", it does.
    """
    if not person or not _by_role(person) or not is_question(query):
        return ""  # "now one about my dog, use his name" needs his name, not more facts
    role = _bare(person)
    for text in memories:
        if not mentions_person(text, person):
            continue
        names = [w for w in _names_given(text, role) if w.casefold() not in ROLES | NO_ONE]
        if names:
            pattern = rf"\b(?:(?:my|our)\s+)?{re.escape(role)}\b"
            asked = re.sub(pattern, names[0], query, count=1, flags=re.IGNORECASE)
            return asked if asked != query else ""
    return ""


def one_person(message: str) -> str:
    """The one person a message names ("Mom", "my manager", "Jordan"), or "" for none or
    several ("Is Alex coming to Jordan's party?" is about both).

    A capitalised word that opens the sentence counts too: "Jordan wants…" names Jordan,
    and "Draft…" then only makes the message name two, so nothing is narrowed.
    """
    people = set()
    for w in words(message):
        key = w.casefold().removesuffix("'s")
        if key in ROLES or (is_name(w) and key not in FUNCTION_WORDS | TITLES | NO_ONE):
            people.add(key)
    return people.pop() if len(people) == 1 else ""
