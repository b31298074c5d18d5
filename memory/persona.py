"""The shipped demo persona: 61 memories about one invented user, and questions about them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.jsonl import read_jsonl

DATA = Path(__file__).parent / "data"
DEMO_USER = "demo"  # the user the demo persona belongs to; reset_demo touches no other
PERSONA_PATH = DATA / "persona.jsonl"
QUESTIONS_PATH = DATA / "persona_questions.jsonl"
UNRELATED_PATH = DATA / "unrelated_questions.jsonl"
CONVERSATION_PATH = DATA / "demo_conversation.jsonl"


def persona() -> list[dict[str, Any]]:
    """The persona memories: {"id", "text", "metadata"}."""
    return [row for _, row in read_jsonl(PERSONA_PATH)]


def demo_conversation() -> list[tuple[str, bool]]:
    """A scripted mixed conversation about the persona: (message, needs memory)."""
    return [(row["message"], row["retrieve"]) for _, row in read_jsonl(CONVERSATION_PATH)]


def seed_demo(store: Any) -> int:
    """Load the persona into `store`; memories already there are kept as they are."""
    from memory.store import Memory

    # Fixed ids make seeding idempotent: a second run finds them all and adds nothing,
    # and a user's edit to a seeded memory is not overwritten.
    todo = [
        Memory(
            id=row["id"],
            text=row["text"],
            similarity=None,
            created_at="",
            source="seeded",
            metadata=row.get("metadata", {}),
        )
        for row in persona()
        if store.get(row["id"]) is None
    ]
    if not todo:
        return 0
    return store.add_records(todo)


def reset_demo(store: Any) -> int:
    """Restore the demo user's memories to the persona exactly: anything added or edited
    since is gone. Refused (MemoryStoreError) on a store of any other user."""
    from memory.records import MemoryStoreError

    if store.user_id != DEMO_USER:
        raise MemoryStoreError(
            f"reset-demo restores the demo persona, and this store is user "
            f"{store.user_id!r}'s, not {DEMO_USER!r}'s: nothing was changed"
        )
    store.clear()
    return seed_demo(store)
