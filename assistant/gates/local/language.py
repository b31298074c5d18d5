"""A message the local gate cannot read: mostly words it was never trained on, so it fails open.

The classifier learned from about 14,000 English messages. A message in another language
("vet nya Mochi siapa sih", "vence cuándo?") reads p=0.00 to it and was skipped, though the
user's own notes held the answers. So the gate keeps the words of the messages it was
trained on (stored with its weights, `GateWeights.vocabulary`), and a message at least half
of whose words it never saw is one it cannot judge: it searches, as it does when it fails.
No language is named anywhere: what counts is the gate's own training data. Capitalised
words are not counted, since a name ("Rua dos Lagares", "Dr Ferraro") says nothing of a
language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# Two unseen words at least: one lower-case name or bit of slang ("whos lwazi's teacher")
# leaves a message readable.
MIN_UNSEEN = 2


def _lowered(word: str) -> str:
    # One form for the stored words and the words checked against them.
    return word.casefold().replace("’", "'")


def vocabulary_of(messages: Iterable[str]) -> frozenset[str]:
    """The words of these messages, as `unfamiliar` compares them."""
    return frozenset(_lowered(w) for m in messages for w in _WORD.findall(m))


def unfamiliar(text: str, vocabulary: frozenset[str]) -> bool:
    """True when at least half of a message's words, and two or more, are not in `vocabulary`."""
    if not vocabulary:  # weights saved without their words cannot tell: nothing is unfamiliar
        return False
    seen = unseen = 0
    for word in _WORD.findall(text):
        lowered = _lowered(word)
        if lowered in vocabulary or lowered.split("'")[0] in vocabulary:
            seen += 1
        elif not word[0].isupper():
            unseen += 1
    return unseen >= MIN_UNSEEN and unseen >= seen
