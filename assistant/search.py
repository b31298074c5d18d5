"""How a turn searches memory: its query, the person it asks about, and every reading.

The query's top k first. "my son" in the message and "Idris" in the memories: what is
stored about him by name fills the places the query itself left free (`by_their_name`);
"my dog" and "Biscuit (beagle)" likewise (`by_its_kind`).

A follow-up is searched as each of the last exchanges would read it too. The resolver reads
it with one earlier exchange and sometimes picks the wrong one: "who's the fella im seein
there?" after "when's the physio for me back" and a general aside ("how many bones in the
human body") was searched with the aside's words, and found nothing. So a follow-up is
also searched after each of the last exchanges' own words, and the rankings are fused with
the resolver's counted double: where the readings agree its best stays first, and a note
only another reading finds can still be sent. No model call; a few more local searches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assistant.followup import Resolved
from assistant.gates.base import Said
from assistant.people import by_their_name
from assistant.pets import by_its_kind
from memory.records import Memory

if TYPE_CHECKING:  # the store imports Chroma; only its type is needed here
    from memory.store import MemoryStore

# The resolver's own ranking weighs this many times one other reading's. At 1 the other
# readings outvoted it on notes it had right; at 3 they found fewer of those it missed
# (docs/followups.md, "Every reading of a follow-up").
RESOLVER_WEIGHT = 2.0


def searched(
    store: MemoryStore, query: str, message: str, resolved: Resolved, said: Sequence[Said], k: int
) -> tuple[tuple[Memory, ...], str]:
    """The top k memories for a `message` searched as `query`, and the name asked, if one was."""
    found, again = _by_name(store, query, resolved.person, k)
    if not resolved.follow_up:
        return found, again
    others = [store.search(text, k=k) for text in readings(message, said, query)]
    return fused(found, others, k), again


def _by_name(store: MemoryStore, query: str, person: str, k: int) -> tuple[tuple[Memory, ...], str]:
    """The top k for the query, filled up by what is stored under the person's name."""
    found = store.search(query, k=k)
    texts = [m.text for m in found]
    named = by_their_name(query, person, texts)
    pet = "" if named else by_its_kind(query, texts)
    again = named or pet
    if not again:
        return tuple(found), ""
    # The query's own ranking first: a follow-up keeps only the best two of it. But not
    # before the pet's own notes: "dog walker Chloé" says "dog" of no pet.
    more = store.search(again, k=k)
    merged = {m.id: m for m in ((*more, *found) if pet else (*found, *more))}
    return tuple(merged.values())[:k], again


def readings(message: str, said: Sequence[Said], query: str) -> list[str]:
    """The message after each earlier exchange's words, newest first, bar the query itself."""
    seen = {" ".join(query.split()).casefold()}
    out = []
    for earlier in reversed(said):
        text = f"{earlier.user.strip()} {message.strip()}"
        key = " ".join(text.split()).casefold()
        if key not in seen:
            seen.add(key)
            out.append(text)
    return out


def fused(
    found: Sequence[Memory], others: Sequence[Sequence[Memory]], k: int
) -> tuple[Memory, ...]:
    """The top k by reciprocal rank summed over the rankings, `found` weighing double."""
    score: dict[str, float] = {}
    by_id: dict[str, Memory] = {}
    for weight, ranking in ((RESOLVER_WEIGHT, found), *((1.0, o) for o in others)):
        for rank, memory in enumerate(ranking):
            score[memory.id] = score.get(memory.id, 0.0) + weight / (1 + rank)
            by_id.setdefault(memory.id, memory)
    # sorted() is stable: on a tie the resolver's order, then the newer reading's, stands.
    return tuple(by_id[i] for i in sorted(score, key=lambda i: -score[i])[:k])
