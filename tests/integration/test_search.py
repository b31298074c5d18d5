"""A turn's search: a follow-up is searched as each of the last exchanges would read it."""

from __future__ import annotations

from assistant.followup import resolve
from assistant.gates.base import Said
from assistant.search import fused, readings, searched
from memory.records import Memory
from tests.stores import seeded_store

PHYSIO = "physio for me back - thurs 13 feb 4.15pm, Aidan at Glasnevin Sports Physio, bring shorts"
NOTES = (
    PHYSIO,
    "GP is Dr Kavanagh on Phibsboro road, blood pressure 145/90 last time",
    "5 a side tuesdays 8pm at Astro Park Coolock with Tommy",
    "Ciara's teacher is Ms Byrne, parent teacher meeting 4 March",
    "van NCT due 20 May, Fagan's garage in Finglas",
    "Mam's birthday 2 June, she wants a new kettle",
    "dentist Dr Walsh, 11 Feb 9am, Dorset St",
)
PHYSIO_TURN = Said(
    "when's the physio for me back",
    "Thursday 13 Feb at 4:15pm.",
    query="when's the physio for me back",
    memories=(PHYSIO,),
)
ASIDE = Said("how many bones in the human body", "An adult has 206 bones.")


def _memories(*ids: str) -> tuple[Memory, ...]:
    return tuple(Memory(i, f"note {i}", 0.5, "", "test") for i in ids)


def test_a_follow_up_read_with_the_wrong_turn_still_finds_the_note_of_the_right_one(tmp_path):
    store = seeded_store(tmp_path, "u", *NOTES)
    message = "who's the fella im seein there?"
    resolved = resolve(message, [PHYSIO_TURN, ASIDE])
    # The resolver reads it with the aside, and that reading alone finds nothing.
    assert resolved.follow_up and "bones" in resolved.query
    assert PHYSIO not in [m.text for m in store.search(resolved.query, k=5)]
    found, _ = searched(store, resolved.query, message, resolved, [PHYSIO_TURN, ASIDE], 5)
    assert [m.text for m in found][:1] == [PHYSIO]


def test_a_message_that_is_no_follow_up_is_searched_by_its_query_alone(tmp_path):
    store = seeded_store(tmp_path, "u", *NOTES)
    message = "when is the dentist?"
    resolved = resolve(message, [PHYSIO_TURN])
    assert not resolved.follow_up
    found, _ = searched(store, message, message, resolved, [PHYSIO_TURN], 5)
    assert [m.id for m in found] == [m.id for m in store.search(message, k=5)]


def test_where_the_readings_disagree_the_resolvers_best_stays_first():
    # Its best weighs 2; another reading's best 1, and its second 0.5.
    assert [m.id for m in fused(_memories("a", "b"), [_memories("b", "c")], 5)] == [
        "a", "b", "c"
    ]  # fmt: skip
    # Two other readings agreeing outvote the resolver's second, not its first.
    agreed = fused(_memories("a", "b"), [_memories("c"), _memories("c")], 2)
    assert [m.id for m in agreed] == ["a", "c"]


def test_each_earlier_exchange_gives_one_reading_newest_first_and_none_twice():
    said = [Said("When am I meeting Alex?"), Said("thanks"), Said("thanks")]
    assert readings("What time?", said, "dinner with Alex What time?") == [
        "thanks What time?",
        "When am I meeting Alex? What time?",
    ]
    # The resolver's own query is not searched again.
    assert readings("What time?", said[:1], "When am I meeting Alex? What time?") == []
