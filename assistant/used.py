"""Which facts a reply used: the memories that share the most of its own words.

The conversation is on the fact the last reply used, not the first its search found
(assistant/answered.py), and a short question carries on a search whose reply used one
(assistant/followup.py). Word overlap only, no model call.
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.asked import ASKED_FOR
from assistant.people import content_words


def _marks(text: str) -> set[str]:
    """The words and numbers of a text that can show which fact a reply used."""
    return {w.casefold().removesuffix("'s") for w in content_words(text)} - ASKED_FOR


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
