"""The change journal: an append-only Chroma collection that tells every process what changed.

Chroma has no change feed, so the store keeps one beside each user's collection. Entry n
(id "000000000042") lists the memory ids one write touched, or says "clear". Entries are
numbered without gaps by an optimistic append: a writer tries id `count()`, and Chroma's
`add` keeps the first record for an id and ignores later ones, so the writer reads its
entry back and moves on to the next number when another writer got there first. A reader
that has applied entries [0, n) therefore needs `count()` to learn whether anything
changed, and `get` by id for exactly the new entries.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

_BATCH = 500
# Chroma wants a vector per record; the journal is never searched, so one zero suffices.
_NO_VECTOR = [0.0]


@dataclass(frozen=True)
class Entry:
    """One journal entry: the memory ids a write touched, or a clear of every memory."""

    seq: int
    ids: tuple[str, ...]
    clear: bool = False


def journal_name(collection: str) -> str:
    """The journal collection that belongs to memory collection `collection`."""
    return "changes-" + collection.removeprefix("memories-")


def _key(seq: int) -> str:
    return f"{seq:012d}"


class Journal:
    """Append and read the change entries of one memory collection."""

    def __init__(self, client: Any, collection: str) -> None:
        self._col = client.get_or_create_collection(
            journal_name(collection),
            embedding_function=None,
            metadata={"memory_gate_journal_of": collection},
        )

    @property
    def id(self) -> str:
        """Chroma's id of the journal collection (a new one means a new history)."""
        return str(self._col.id)

    def count(self) -> int:
        """How many entries exist; entries 0..count-1 all exist."""
        return int(self._col.count())

    def append(self, ids: list[str] | None, start: int | None = None) -> int:
        """Record that `ids` changed (None: every memory was deleted); returns the entry's seq.

        `start` is the first number to try, for a caller that knows it (default: count()).
        """
        nonce = uuid.uuid4().hex
        body = json.dumps({"w": nonce, "ids": ids} if ids is not None else {"w": nonce, "clear": 1})
        seq = self.count() if start is None else start
        while True:
            self._col.add(ids=[_key(seq)], embeddings=[_NO_VECTOR], documents=[body])
            got = self._col.get(ids=[_key(seq)], include=["documents"])
            if not got["documents"]:
                # Chroma reads its own writes: an entry missing right after add() is a bug
                # in this assumption, and looping on would never end.
                raise RuntimeError(f"journal entry {_key(seq)} missing right after it was added")
            if json.loads(got["documents"][0])["w"] == nonce:
                return seq
            seq += 1  # another writer took this number first

    def read(self, start: int, end: int) -> list[Entry]:
        """Entries start..end-1 in order, stopping at the first one not visible yet."""
        out: list[Entry] = []
        for lo in range(start, end, _BATCH):
            keys = [_key(s) for s in range(lo, min(end, lo + _BATCH))]
            got = self._col.get(ids=keys, include=["documents"])
            bodies = dict(zip(got["ids"], got["documents"], strict=True))
            for key in keys:
                if key not in bodies:
                    return out
                body = json.loads(bodies[key])
                out.append(Entry(int(key), tuple(body.get("ids") or ()), bool(body.get("clear"))))
        return out
