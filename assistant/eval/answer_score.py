"""Scoring replies against gold answers: right, damaged by memories, boilerplate, token F1.

The rules, precisely:

- **Normal form.** Lower case, accents dropped (NFKD), thousands separators removed between
  digits ("1,200" -> "1200"), "&" read as "and". A text's *tokens* are its runs of letters
  and digits, a decimal point inside a number kept ("26.2"); everything else separates.
- **Correct.** A reply is right when the tokens of one gold answer appear in it as a
  contiguous run of tokens. Matching on tokens means "4" is not found inside "14" or "4.5",
  and "Velvet Tramlines" is found across a line break. A clock's am/pm stands apart
  ("4:15pm" holds "4:15", and a whole hour "8:00 PM" holds "8pm"), and so does a unit
  ("230V" holds "230"), and a clock's minutes after a colon or a dot are one time ("3:45
  PM" holds "3.45pm"); a word in the plural is that word ("Tuesdays" holds "Tuesday",
  "walnuts" "walnut"; not "glass" or "Paris"), a weekday or month its first three letters
  ("Tue", "Sept"), an ordinal its number ("May 12th" holds "May 12"), and a month before
  its day the day before its month ("September 30th" holds "30 Sept"); in
  assistant/eval/answer_match.py. A question may instead ask for `last_number`: the
  reply's last number must equal a gold number (GSM8K: a worked reply repeats the
  problem's numbers).
- **Damaged** (questions that need no memory). The reply names something specific to a
  stored memory, or talks about the user's memory or notes, or says it knows nothing
  about the user. Specific to a memory means a *memory term* of any stored memory that
  appears in the reply but in neither the question nor its gold answers:
  - a capitalised word of three letters or more (a name, a place), minus stopwords and
    generic words (days, months, holidays, titles, "University", "Road"...); when it is
    also a common English word ("Crown", "End") it counts only where the reply capitalises
    it too;
  - a number of two characters or more ("31", "600", "7B"): single digits are everywhere;
  - a rare word: a lower-case word of four letters or more that is not a whole word of
    MiniLM's 22,500-word English vocabulary ("levothyroxine", "courgettes");
  - a distinctive phrase: four consecutive memory tokens, at least two not stopwords.
  World knowledge that also sits in a memory is not a leak: a term in the reply of the
  `never` mode (no memories at all) to the same question is removed, as are terms of the
  question and its answers (the capital of Portugal may say "Lisbon").
- **Speaks as the user** (any reply): it repeats the question's "my X" ("my brother") or
  says "I" before the question's own word after "I" ("am I allergic" -> "I am allergic").
- **Boilerplate** (any reply). Talk about memory or notes: "according to your…", "your
  long-term memory", "the notes", "the user", "the memory system", "based on the
  information you provided"...
- **Note read back** (any reply). The reply repeats the wording of the note sent with a
  message whose search found nothing or failed (assistant/reply/respond.py): "nothing saved",
  "saved information", "... for this message", "if it asks about my own life", "can't be
  looked up", "anything else, just answer", or its instruction ("say you don't know that
  yet"). Saying what the note asks for is no leak: "I don't know when your dentist
  appointment is", "I don't know that yet", "I can't check that right now" are honest
  answers. A phrase the question itself holds ("where is saved data kept?") is no leak.
  A general reply that reads the note back is damaged too.
- **Token F1** (LoCoMo, assistant/eval/locomo_f1.py). LoCoMo's own normalisation (lower
  case, punctuation and the words a/an/the/and dropped) and multiset token F1; multi-hop
  answers (category 1) are split on commas and averaged as LoCoMo's evaluation does. No
  Porter stemming (LoCoMo's script stems): inflected words that differ count as
  different, so figures are a little lower.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u2009'’](?=\d{3}(?!\d))")
_TOKEN = re.compile(r"\d+(?:\.\d+)+|[^\W_]+")
# "4:15pm" holds the time 4:15: the clock's am/pm is a token of its own.
_CLOCK = re.compile(r"(?<=\d)(?=[ap]\.?m\b)", re.IGNORECASE)

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves i'm i've i'd i'll it's that's also got get gets getting one
    two three four five six seven eight nine ten every still usually always mostly really
    bit lot much many new old last next first second well just like""".split()
)
# Capitalised, but not specific to anyone: they name kinds of things, days and titles.
GENERIC = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays january february march april may june july august
    september october november december jan feb mar apr jun jul aug sep sept oct nov dec
    christmas easter thanksgiving new year dr mr mrs ms mx st university college school
    centre center hospital street road avenue north south east west the my our""".split()
)

BOILERPLATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("according to your/the notes", r"\baccording to (your|the|my) "),
        ("based on your/the notes", r"\bbased on (your|the) (notes?|memor|records?|stored)"),
        (
            "based on the information provided",
            r"\bbased on the (information|details|data) "
            r"(you('ve| have)? provided|provided|given|available|retrieved|stored)",
        ),
        ("your memory", r"\b(your|the user'?s?|long[- ]term|my) memor(y|ies)\b"),
        ("memory system", r"\bmemory (system|store|search|notes?|records?|data)\b"),
        ("the notes", r"\b(the|your|these|those|retrieved|provided|stored|my) notes?\b"),
        ("the user", r"\bthe user('?s)?\b"),
        ("retrieved from", r"\b(retrieved|recalled|stored|saved) (from|in) (your|the|my)\b"),
    )
)
ABOUT_YOU_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "no information about you",
            r"\b(i )?(don'?t|do not|cannot|can'?t) (have|find|see|access)( any)?( personal)? "
            r"(information|info|details|data|records?|memor\w*|access)( \w+)? (about|on|of|to) "
            r"(you|your)\b",
        ),
        (
            "no information provided",
            r"\bno (information|details|data) (was |is )?(provided|"
            r"available|found|given) (in|about|on|from)\b",
        ),
    )
)

# The empty-search and failed-search notes' own wording, as a reply that reads them back
# would say it ("I don't have any saved information about you for this message. If it
# asks about my own life, I don't know that yet."), in either person.
NOTE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "nothing saved",
            r"\b(nothing|anything)( is| was| yet)? saved (about|for|on|regarding|yet)\b"
            r"|\bhave nothing saved\b|\bsaved about (you|me)\b",
        ),
        ("saved information", r"\bsaved (information|info|details|data|facts|notes|memories)\b"),
        (
            "for this message",
            r"\b(saved|stored|information|info|details|nothing|anything|found|know|about "
            r"(you|me))\b[^.!?\n]{0,30}\bfor this message\b|\b(if|when) (it|this message) asks\b",
        ),
        (
            "my own life",
            r"\babout my own life\b"
            r"|\b(asks?|asking|asked|questions?|message) about your own life\b",
        ),
        ("can't be looked up", r"\b(can'?t|cannot|can not|couldn'?t|could not) be looked up\b"),
        ("just answer", r"\b(for )?anything else,? (just answer|i('ll| will) (just )?answer)\b"),
        # The note since issue 28 is a fact ("Things I told you before that match this:
        # none."), and the system prompt says what to do with it: both, read back.
        ("things told before", r"\bthings (i|you) told (you|me) before\b"),
        ("match this", r"\b(that|which|nothing|none) match(es)? (this|that|your message)\b"),
        ("none match", r"\bmatch(es)? (this|that):? none\b|\bnone (of (it|them) )?match\b"),
        ("still holds", r"\bearlier in this chat still holds\b"),
        (
            "the note's instruction",
            r"\bsay (you|i) (don'?t|do not) know that yet\b|\bsay (you|i) can'?t check that\b",
        ),
    )
)


def _plain(text: str) -> str:
    # Case kept: a memory's capitalised words are its names.
    text = unicodedata.normalize("NFKD", str(text))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return _THOUSANDS.sub("", text).replace("&", " and ")


def normalise(text: str) -> str:
    """Lower case, no accents, no thousands separators, '&' as 'and'."""
    return _plain(text).casefold()


def tokens(text: str) -> list[str]:
    """The normalised text's tokens: runs of letters and digits, decimals kept whole."""
    return _TOKEN.findall(_CLOCK.sub(" ", normalise(text)))


def holds_run(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """True when the needle's tokens appear, in order and adjacent, in the haystack."""
    n = len(needle)
    if n == 0:
        return False
    first = needle[0]
    return any(
        haystack[i] == first and list(haystack[i : i + n]) == list(needle)
        for i in range(len(haystack) - n + 1)
    )


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """MiniLM's whole-word English vocabulary (22,500 words): what counts as a common word."""
    from memory.embeddings import TOKENIZER_PATH

    vocab = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isalpha() and not w.startswith("##"))


@dataclass(frozen=True)
class MemoryTerms:
    """What would identify a stored memory in a reply: its names, numbers, rare words, phrases."""

    terms: dict[str, str] = field(default_factory=dict)  # token -> kind (name/number/rare)
    phrases: frozenset[tuple[str, ...]] = frozenset()
    common: frozenset[str] = frozenset()  # the common words: names among them need a capital

    @classmethod
    def of(cls, memories: Iterable[str], vocabulary: frozenset[str] | None = None) -> MemoryTerms:
        """The terms of these memory texts."""
        common = english_words() if vocabulary is None else vocabulary
        terms: dict[str, str] = {}
        phrases: set[tuple[str, ...]] = set()
        for text in memories:
            for raw in _TOKEN.findall(_plain(text)):
                token = raw.casefold()
                if token in STOPWORDS or token in GENERIC:
                    continue
                if any(ch.isdigit() for ch in token):
                    if len(token) >= 2:
                        terms.setdefault(token, "number")
                elif raw[:1].isupper() and len(token) >= 3:
                    terms[token] = "name"
                elif len(token) >= 4 and token not in common:
                    terms.setdefault(token, "rare")
            toks = tokens(text)
            for i in range(len(toks) - 3):
                gram = tuple(toks[i : i + 4])
                if sum(t not in STOPWORDS for t in gram) >= 2:
                    phrases.add(gram)
        return cls(terms, frozenset(phrases), common)


@dataclass(frozen=True)
class Damage:
    """Why a reply to a question that needs no memory is damaged (empty: it is not)."""

    terms: tuple[str, ...] = ()  # memory terms the reply used
    phrases: tuple[str, ...] = ()  # memory phrases the reply repeated
    boilerplate: tuple[str, ...] = ()  # talk about memory or notes
    about_you: tuple[str, ...] = ()  # "I don't have any information about you"
    note: tuple[str, ...] = ()  # the empty-search note read back

    @property
    def damaged(self) -> bool:
        """True when any rule fired."""
        return bool(self.terms or self.phrases or self.boilerplate or self.about_you or self.note)


def boilerplate(reply: str) -> tuple[str, ...]:
    """The names of the boilerplate patterns (talk about memory or notes) the reply uses."""
    text = normalise(reply).replace("’", "'")
    return tuple(name for name, pattern in BOILERPLATE_PATTERNS if pattern.search(text))


def about_you(reply: str) -> tuple[str, ...]:
    """The names of the 'I know nothing about you' patterns the reply uses."""
    text = normalise(reply).replace("’", "'")
    return tuple(name for name, pattern in ABOUT_YOU_PATTERNS if pattern.search(text))


def note_read_back(reply: str, question: str = "") -> tuple[str, ...]:
    """The names of the empty-search note's phrases the reply repeats (not the question's)."""
    text, asked = (normalise(t).replace("’", "'") for t in (reply, question))
    return tuple(
        name
        for name, pattern in NOTE_PATTERNS
        if pattern.search(text) and not pattern.search(asked)
    )


def damage(
    reply: str,
    question: str,
    answers: Iterable[str],
    memory_terms: MemoryTerms,
    world: str | None = None,
) -> Damage:
    """How a reply to a question that needs no memory was damaged by the user's memories.

    `world` is the `never` mode's reply to the same question, when it ran: what a model
    says with no memories at all is world knowledge, not a leak.
    """
    allowed = set(tokens(question))
    for answer in answers:
        allowed.update(tokens(str(answer)))
    if world:
        allowed.update(tokens(world))
    cased = _TOKEN.findall(_plain(reply))
    reply_tokens = [t.casefold() for t in cased]
    common = memory_terms.common
    used = sorted(
        {
            token
            for raw, token in zip(cased, reply_tokens, strict=True)
            if token in memory_terms.terms
            and token not in allowed
            # A name that is also a common word ("Crown", "End", "Royal") counts only
            # where the reply writes it as a name: "the end of the war" is no leak.
            and not (memory_terms.terms[token] == "name" and token in common and raw.islower())
        }
    )
    phrases = []
    if memory_terms.phrases:
        for i in range(len(reply_tokens) - 3):
            gram = tuple(reply_tokens[i : i + 4])
            if gram in memory_terms.phrases and not set(gram) <= allowed:
                phrases.append(" ".join(gram))
    return Damage(
        tuple(used),
        tuple(dict.fromkeys(phrases)),
        boilerplate(reply),
        about_you(reply),
        note_read_back(reply, question),
    )


def speaks_as_user(reply: str, question: str) -> bool:
    """True when the reply takes the user's place: it echoes the question's 'my X' or 'I X'.

    "What does my partner do?" -> "My partner is a teacher"; "Which antibiotic am I
    allergic to?" -> "I am allergic to penicillin". The assistant should say "your", "you".
    """
    asked, said = tokens(question), tokens(reply)
    for i, word in enumerate(asked[:-1]):
        if word == "my" and holds_run(said, ["my", asked[i + 1]]):
            return True
        if word == "i":
            # the content word after "I" ("do I usually work" -> "usually"), said after "I"
            following = next((w for w in asked[i + 1 : i + 3] if w not in STOPWORDS), None)
            if following and any(
                t == "i" and following in said[j + 1 : j + 4] for j, t in enumerate(said)
            ):
                return True
    return False
