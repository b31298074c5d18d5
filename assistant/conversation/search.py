"""How a turn searches memory, and which of its memories the reply used.

A first message is searched as its query, top k. After a turn, a message is searched as
every reading of it (assistant/conversation/reading.py): its query (joined after the
exchange it continues, for a follow-up; itself, otherwise) and each other reading. The
rankings are fused by reciprocal rank, the query's own counted double: where the readings
agree its best stays first, and a note only another reading finds can still be sent. A
follow-up is answered with the fused top `FOLLOW_UP_SENT`: the 1.5B model reads the one
right note better among three than among five. No model call; a few more local searches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assistant.conversation.reading import Reading
from assistant.text import content_words
from memory.records import Memory

if TYPE_CHECKING:  # the store imports Chroma; only its type is needed here
    from memory.store import MemoryStore

# The query's own ranking weighs this many times one other reading's (docs/followups.md).
QUERY_WEIGHT = 2.0
FOLLOW_UP_SENT = 3


def searched(store: MemoryStore, query: str, reading: Reading, k: int) -> tuple[Memory, ...]:
    """The memories a message searched as `query` is answered with."""
    found = tuple(store.search(query, k=k))
    rankings = [(QUERY_WEIGHT, found)]
    rankings += [(1.0, tuple(store.search(text, k=k))) for text in reading.others if text != query]
    ranked = fused(rankings) if len(rankings) > 1 else found
    return ranked[: min(k, FOLLOW_UP_SENT) if reading.follow_up else k]


def fused(rankings: Sequence[tuple[float, Sequence[Memory]]]) -> tuple[Memory, ...]:
    """Every memory ranked, by reciprocal rank summed over the weighted rankings."""
    score: dict[str, float] = {}
    by_id: dict[str, Memory] = {}
    for weight, ranking in rankings:
        for rank, memory in enumerate(ranking):
            score[memory.id] = score.get(memory.id, 0.0) + weight / (1 + rank)
            by_id.setdefault(memory.id, memory)
    # sorted() is stable: on a tie the query's order, then the newer reading's, stands.
    return tuple(by_id[i] for i in sorted(score, key=lambda i: -score[i]))


def _marks(text: str) -> set[str]:
    """The words and numbers of a text that can show which fact a reply used."""
    return {w.casefold() for w in content_words(text)}


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
