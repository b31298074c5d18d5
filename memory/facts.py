"""Fact identity: when two texts state the same fact, and the id a fact's text gives it."""

from __future__ import annotations

import hashlib
import re
import unicodedata

# A negation word, a word ending in n't (straight or curly apostrophe). One list for every
# judgement of "does this text negate" (capture's grounding check reads it from here).
NEGATION = re.compile(r"\b(?:not|no|never|nobody|nothing|none|cannot)\b|n't\b|n’t\b", re.I)

# Words that change no fact when added or dropped: articles and intensifiers ("I really love
# sushi" is "I love sushi"). Nothing here may carry a number, a name, a negation, a
# direction or a tense: every other word has to be there, in the same place.
FILLER = frozenset(
    "a an the really actually honestly basically definitely totally truly literally very".split()
)
# Contractions spelled out, so "I'm" and "I am" are one wording. "'d" (had or would) and a
# name's "'s" (is or possessive) are ambiguous and stay as they are: they merge nothing.
_CONTRACTIONS = (
    (
        re.compile(r"\b(ca|wo|sha)n't\b"),
        lambda m: {"ca": "can", "wo": "will", "sha": "shall"}[m[1]] + " not",
    ),
    (re.compile(r"\bcannot\b"), lambda m: "can not"),
    (re.compile(r"n't\b"), lambda m: " not"),
    (re.compile(r"'m\b"), lambda m: " am"),
    (re.compile(r"'re\b"), lambda m: " are"),
    (re.compile(r"'ve\b"), lambda m: " have"),
    (re.compile(r"'ll\b"), lambda m: " will"),
    (re.compile(r"\b(it|that|there|here|what|who|where|he|she|this)'s\b"), lambda m: m[1] + " is"),
)
# A number keeps its inner separators ("7:30" is not "730", "3-1" not "31"); a word is
# letters only, so "6am" is "6 am"; "'s" is a token of its own; every other mark is dropped
# below unless it is a symbol that can change a fact ("$", "%", "+").
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|'s\b|[^\W\d_]+|[^\w\s]")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


def normalise(text: str) -> str:
    """The form two spellings of one fact share: case, spacing and end punctuation ignored."""
    return re.sub(r"\s+", " ", text.casefold()).strip().rstrip(".!?;, ")


def text_id(user_id: str, text: str) -> str:
    """The id a fact gets from its normalised text: the same fact, said twice, has one id."""
    return hashlib.sha256(f"{user_id}\n{normalise(text)}".encode()).hexdigest()[:32]


def _kept(token: str) -> bool:
    if token[0].isalnum() or token == "'s":
        return token not in FILLER
    return unicodedata.category(token)[0] == "S" or token in "%#@"


def fact_words(text: str) -> tuple[str, ...]:
    """The words that make a text's fact, in order: no case, marks, contractions or fillers."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    for pattern, spelled in _CONTRACTIONS:
        folded = pattern.sub(spelled, folded)
    tokens = ("and" if t == "&" else t for t in _TOKEN.findall(folded))
    return tuple(t for t in tokens if _kept(t))


def same_fact(a: str, b: str) -> bool:
    """True when two texts state one fact: the same words in the same order, once normalised.

    The one merge rule of remember(), capture and import. Never true for a permutation: "Alex
    owes Sam" is not "Sam owes Alex", though MiniLM puts them at cosine 0.994 and a rule on
    word sets merged them (issue 29). Case, spacing, punctuation, spelled-out contractions,
    articles and intensifiers are all it forgives (docs/memory.md, "Near-duplicates").
    """
    return fact_words(a) == fact_words(b)
