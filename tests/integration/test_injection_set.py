"""The injection set's questions against a real store holding the demo persona."""

from __future__ import annotations

import pytest

from bench.injection_set import load


@pytest.mark.chroma  # searches a real store
def test_every_question_finds_its_memory_among_the_demo_persona(tmp_path):
    from memory.persona import seed_demo
    from memory.store import MemoryStore

    store = MemoryStore.persistent(tmp_path / "mem", "set")
    seed_demo(store)
    missed = []
    for row in load():
        added = store.remember(row["memory"])
        found = {m.id for m in store.search(row["question"], k=5)}
        if added.id not in found:
            missed.append(row["id"])
        if not added.merged:
            store.delete(added.id)
    assert missed == []
