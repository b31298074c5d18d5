"""Fact identity: when two texts state the same fact, and the id a fact's text gives it."""

from __future__ import annotations

import hashlib
import re

# A negation word, a word ending in n't (straight or curly apostrophe). One list for every
# judgement of "does this text negate": same_fact() here, and capture's grounding check.
NEGATION = re.compile(r"\b(?:not|no|never|nobody|nothing|none|cannot)\b|n't\b|n’t\b", re.I)

# Cosine at or above this between a new text and an existing memory may mean "same fact";
# same_fact() then decides (numbers, names and negations must agree). docs/memory.md.
DUPLICATE_COSINE = 0.95

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_PRONOUN_I = frozenset({"i", "i'm", "i've", "i'd", "i'll"})


def normalise(text: str) -> str:
    """The form two spellings of one fact share: case, spacing and end punctuation ignored."""
    return re.sub(r"\s+", " ", text.casefold()).strip().rstrip(".!?;, ")


def text_id(user_id: str, text: str) -> str:
    """The id a fact gets from its normalised text: the same fact, said twice, has one id."""
    return hashlib.sha256(f"{user_id}\n{normalise(text)}".encode()).hexdigest()[:32]


def same_fact(a: str, b: str) -> bool:
    """False when two similar texts differ in a number, a name or a negation."""
    # MiniLM puts "My PIN is 4821" / "...4822" at cosine 0.955, "...7:30pm..." / "...8:30pm..."
    # at 0.997, "I am (not) allergic to penicillin" at 0.973, and a long sentence with
    # another name at 0.945 (docs/memory.md): the words that differ decide, not the cosine.
    words_a = _WORD.findall(a)
    words_b = _WORD.findall(b)
    diff = {w.casefold() for w in words_a} ^ {w.casefold() for w in words_b}
    if any(ch.isdigit() for w in diff for ch in w):
        return False
    if any(NEGATION.search(w) for w in diff):
        return False
    names = {w.casefold() for w in (*words_a, *words_b) if w[:1].isupper()} - _PRONOUN_I
    return not diff & names
