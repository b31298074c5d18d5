"""The memory package's pure logic: fact identity, scoring, the keyword index, folder locks.

No Chroma and no ONNX here: these run in a second, and this module must not import them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.facts import FILLER, NEGATION, fact_words, normalise, same_fact, text_id
from memory.folder_lock import LOCK_FILE, FolderInUseError, FolderLocks
from memory.lexical import BM25Index
from memory.records import MemoryStoreError, to_memory, validate_metadata
from memory.scoring import DENSE_WEIGHT, coverage, rank
from memory.tokens import tokenize

ROOT = Path(__file__).resolve().parents[2]


# ---- fact identity -----------------------------------------------------------------------


def test_same_fact_compares_numbers_names_and_negations():
    assert not same_fact("Dinner with Ben and Pepper", "Dinner with Sam and Pepper")
    assert not same_fact("My PIN is 4821", "My PIN is 4822")
    assert not same_fact("I like cilantro", "I don't like cilantro")
    assert not same_fact("I can swim", "I can't swim")
    assert not same_fact("my boss is tom", "my boss is tim")  # a name without a capital
    assert not same_fact("I have two cats", "I have three cats")  # a number in words
    assert same_fact("Alex moved to Oakland", "alex moved to oakland.")
    assert same_fact("I'm allergic to peanuts", "I am allergic to peanuts")


ISSUE_29_PERMUTATIONS = [
    ("Alex owes Sam 50 euros.", "Sam owes Alex 50 euros."),
    ("The dog bit the man.", "The man bit the dog."),
    ("My flight leaves at 9 and lands at 11.", "My flight leaves at 11 and lands at 9."),
    (
        "Fact number 125: my locker 125 holds item 875.",
        "Fact number 875: my locker 875 holds item 125.",
    ),
    ("I moved from Paris to Berlin", "I moved from Berlin to Paris"),
    ("My sister called my mother", "My mother called my sister"),
]


@pytest.mark.parametrize(("a", "b"), ISSUE_29_PERMUTATIONS)
def test_a_permutation_is_another_fact(a: str, b: str):
    # These merged while the rule compared word sets, and the first fact was lost.
    assert not same_fact(a, b) and not same_fact(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I'm allergic to peanuts!", "i am allergic to peanuts"),  # case, mark, contraction
        ("Sam can't come to the party", "Sam cannot come to the party"),
        ("I don\u2019t eat pork", "I do not eat pork"),  # a curly apostrophe
        ("It's my turn to host book club", "It is my turn to host book club"),
        ("  I work   at the bakery ", "I work at the bakery"),  # spacing
        ("I go to yoga at 6am", "I go to yoga at 6 am"),
        ("wifi pw: tulip42", "Wifi PW - tulip42"),
        ("I really, really like hiking", "I like hiking"),  # an intensifier, twice
        ("The dinner with Alex is on Thursday", "Dinner with Alex is on Thursday"),  # article
        ("Ben & Sam", "Ben and Sam"),
    ],
)
def test_a_restatement_in_the_same_order_is_the_same_fact(a: str, b: str):
    assert same_fact(a, b) and same_fact(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Dinner at 7:30", "Dinner at 730"),  # a number keeps its separators
        ("The score was 3-1", "The score was 31"),
        ("I owe him $50", "I owe him €50"),  # a currency is part of the fact
        ("Rent went up 5%", "Rent went up 5"),
        ("I moved to Paris", "I moved from Paris"),  # a direction is never filler
        ("My boss is Tom", "My boss was Tom"),  # nor a tense
        ("I walk the dog", "I walked the dog"),  # no stemming
        ("Jordan is my ex-partner", "Jordan is my partner"),
        ("I'd go", "I would go"),  # 'd: had or would, so it merges nothing
    ],
)
def test_a_changed_word_number_or_symbol_is_another_fact(a: str, b: str):
    assert not same_fact(a, b)


def test_fact_words_are_what_the_rule_compares():
    assert fact_words("Alex's dog won't eat at 7:30pm!") == (
        "alex", "'s", "dog", "will", "not", "eat", "at", "7:30", "pm",
    )  # fmt: skip


# Distinct content words: names, numbers, roles, places, and words that flip a fact.
_CONTENT = (
    "alex sam Maya Ben dog man owes bit leaves lands 9 11 125 875 from to Paris Berlin "
    "before after my her his not never sister mother 50 euros tea coffee left right"
).split()


@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(st.sampled_from(_CONTENT), min_size=2, max_size=8, unique_by=str.casefold),
    data=st.data(),
)
def test_any_reordering_of_distinct_content_words_is_not_the_same_fact(words, data):
    order = data.draw(st.permutations(words))
    if [w.casefold() for w in order] == [w.casefold() for w in words]:
        return  # not a reordering
    # Whatever fillers, case and marks surround the words, the order decides.
    glue = data.draw(st.lists(st.sampled_from([" ", " the ", ", ", " really ", ". "]),
                              min_size=len(words), max_size=len(words)))  # fmt: skip
    a = "".join(w + g for w, g in zip(words, glue, strict=True))
    b = "".join(w.upper() + g for w, g in zip(order, glue, strict=True))
    assert not same_fact(a, b)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(_CONTENT), min_size=1, max_size=8),
    fillers=st.lists(st.sampled_from(sorted(FILLER)), max_size=4),
    data=st.data(),
)
def test_fillers_case_and_marks_never_split_one_fact(words, fillers, data):
    a = " ".join(words)
    noisy = list(words)
    for filler in fillers:
        noisy.insert(data.draw(st.integers(0, len(noisy))), filler)
    b = "  ".join(w.upper() if data.draw(st.booleans()) else w for w in noisy) + "!"
    assert same_fact(a, b)


@pytest.mark.parametrize("word", ["not", "never", "nobody", "cannot", "can't", "mustn't", "won’t"])
def test_one_negation_list_covers_words_and_every_nt_form(word: str):
    assert NEGATION.search(word)


@pytest.mark.parametrize("word", ["note", "knot", "now", "snow", "innocent", "nope", "i'm"])
def test_words_that_only_look_negative_are_not_negations(word: str):
    assert not NEGATION.search(word)


def test_one_fact_spelled_two_ways_has_one_id_per_user():
    assert normalise("  Alex moved to  OAKLAND. ") == "alex moved to oakland"
    assert text_id("ann", "Alex moved to Oakland") == text_id("ann", "alex moved to oakland!")
    assert text_id("ann", "Alex moved to Oakland") != text_id("bob", "Alex moved to Oakland")


# ---- records -----------------------------------------------------------------------------


def test_metadata_keeps_plain_values_and_refuses_the_reserved_prefix():
    assert validate_metadata({"topic": "health", "n": 3}) == {"topic": "health", "n": 3}
    with pytest.raises(MemoryStoreError):
        validate_metadata({"mg:source": "typed"})


def test_a_chroma_row_becomes_a_memory_without_the_stores_own_fields():
    meta = {"mg:created_at": "2024-01-01", "mg:source": "seeded", "mg:flag": "", "b": 2, "a": 1}
    m = to_memory("id1", "text", meta, 0.5)
    assert (m.created_at, m.source, m.flag, m.similarity) == ("2024-01-01", "seeded", None, 0.5)
    assert list(m.metadata) == ["a", "b"]  # sorted: exports are byte-for-byte stable


# ---- hybrid scoring ----------------------------------------------------------------------


def test_coverage_is_the_share_of_query_idf_a_memory_holds():
    idf = {"alex": 3.0, "dinner": 1.0}
    assert coverage("Dinner with Alex", idf) == pytest.approx(1.0)
    assert coverage("Dinner with Sam", idf) == pytest.approx(0.25)
    assert coverage("anything", {}) == 0.0


def test_rank_mixes_cosine_and_coverage_and_breaks_ties_by_id():
    idf = {"alex": 1.0}
    ranked = rank({"b": ("about Alex", 0.2), "a": ("about Alex", 0.2), "c": ("x", 0.9)}, idf, 2)
    assert [mid for mid, _ in ranked] == ["a", "b"]
    assert ranked[0][1] == pytest.approx(DENSE_WEIGHT * 0.2 + (1 - DENSE_WEIGHT) * 1.0)


# ---- the keyword index on its own ----------------------------------------------------------


def test_tokenize_stems_and_drops_stopwords():
    assert tokenize("When did Caroline go to the painting classes?") == [
        "caroline",
        "go",
        "paint",
        "class",
    ]


@pytest.mark.parametrize(
    ("query", "memory"),
    [
        ("Where did I study vet science?", "Studied at Onderstepoort, qualified 2011."),
        ("When did we marry?", "We married in Stellenbosch in 2015."),
        ("What did the kids try?", "The kids tried sushi for the first time."),
    ],
)
def test_a_past_tense_in_ied_shares_its_word_with_the_present(query: str, memory: str):
    # "studied" was "studi" and never met "study": the keyword half of the search missed it.
    assert set(tokenize(query)) & set(tokenize(memory)) - {"kid"}


@pytest.mark.parametrize(
    ("query", "memory"),
    [
        ("When's Liam's birthday?", "liams bday is 9 august, he wants a new wetsuit"),
        ("what time was dad's appointment?", "dad cardiology appt apr 15, 10am"),
        ("When is the team meeting?", "team mtg every tues 9am"),
        ("Who supplies our vegetables?", "veg comes from Ferme Bellerive, Thursday drop-off"),
    ],
)
def test_chat_shorthand_shares_its_word_with_the_word_spelt_out(query: str, memory: str):
    # "bday" and "appt" are how notes are typed; the keyword half matched neither.
    assert set(tokenize(query)) & set(tokenize(memory)) - {"liam", "dad", "team"}


def test_an_accented_word_is_one_word_and_meets_its_unaccented_spelling():
    # "Montréal" was "montr" and "al": the note "in montreal we stay with my brother" and
    # "Who are we staying with in Montréal?" shared no word but "stay".
    assert tokenize("Montréal, Oisín, école") == ["montreal", "oisin", "ecole"]
    # Ł has no accent Unicode can take off: "Łukasz" was "ukasz", and "lukasz" never met it.
    assert tokenize("Łukasz Zieliński") == ["lukasz", "zielinski"]
    index = BM25Index()
    index.add_many(
        [("brother", "in montreal we stay with my brother in verdun"), ("trip", "summer trip")]
    )
    assert index.search("Who are we staying with in Montréal?", 1)[0][0] == "brother"


def test_bm25_index_add_remove_and_compaction():
    index = BM25Index()
    index.add_many((f"d{i}", f"common words plus token{i}") for i in range(300))
    for i in range(200):
        assert index.remove(f"d{i}")
    assert len(index) == 100
    assert index.search("token250", 1)[0][0] == "d250"
    assert index.search("token5", 1) == []
    index.add("d250", "replaced text")
    assert index.search("token250", 1) == [] and index.search("replaced", 1)[0][0] == "d250"
    top = index.search("common token260", 3)
    assert top[0][0] == "d260" and top[0][2] == pytest.approx(1.0)


def test_a_saved_index_loads_whole_and_a_cut_one_is_not_trusted(tmp_path: Path):
    index = BM25Index()
    index.add_many([("a", "violin in the attic"), ("b", "kayak on the lake")])
    path = tmp_path / "i.bm25"
    index.save(path, {"cursor": 7})
    loaded, info = BM25Index.load(path)
    assert info["cursor"] == 7 and loaded.search("violin", 1)[0][0] == "a"
    path.write_bytes(path.read_bytes()[:-10])
    assert BM25Index.load(path) is None
    assert BM25Index.load(tmp_path / "missing.bm25") is None


# ---- one process per folder ----------------------------------------------------------------


def test_a_folder_is_claimed_once_per_process_and_refused_to_another(tmp_path: Path):
    locks = FolderLocks()
    assert locks.claim(tmp_path) and locks.claim(tmp_path)  # again in this process: fine
    other = (
        "import sys; from pathlib import Path; from memory.folder_lock import FolderLocks\n"
        "FolderLocks().claim(Path(sys.argv[1]))"
    )
    run = [sys.executable, "-c", other, str(tmp_path)]
    refused = subprocess.run(run, cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode != 0 and FolderInUseError.__name__ in refused.stderr
    assert "chroma run --path" in refused.stderr  # it says how to share the folder
    locks.release(tmp_path)
    subprocess.run(run, cwd=ROOT, check=True, capture_output=True)
    assert (tmp_path / LOCK_FILE).exists()


def test_this_module_needs_neither_chroma_nor_onnx():
    code = (
        "import sys, tests.unit.test_memory_logic\n"
        "assert not {'chromadb', 'onnxruntime'} & set(sys.modules), 'heavy import'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)


# ---- the change journal, on a stand-in for Chroma's add-keeps-the-first-record rule --------


class _Collection:
    """What the journal uses of a Chroma collection: add keeps the first record of an id."""

    def __init__(self) -> None:
        self.id = "journal-1"
        self.docs: dict[str, str] = {}

    def add(self, ids: list[str], embeddings: object, documents: list[str]) -> None:
        for i, doc in zip(ids, documents, strict=True):
            self.docs.setdefault(i, doc)

    def get(self, ids: list[str], include: object) -> dict[str, list[str]]:
        found = [i for i in ids if i in self.docs]
        return {"ids": found, "documents": [self.docs[i] for i in found]}

    def count(self) -> int:
        return len(self.docs)


class _Client:
    def __init__(self) -> None:
        self.collections: dict[str, _Collection] = {}

    def get_or_create_collection(self, name: str, **_: object) -> _Collection:
        return self.collections.setdefault(name, _Collection())


def test_two_writers_number_journal_entries_without_gaps_or_overlap():
    from memory.journal import Journal

    client = _Client()
    a, b = Journal(client, "memories-x"), Journal(client, "memories-x")
    assert a.append(["m1"]) == 0
    # b starts from a stale guess: entry 0 is taken, so its entry becomes 1.
    assert b.append(["m2"], start=0) == 1
    assert a.append(None) == 2
    entries = b.read(0, 3)
    assert [(e.seq, e.ids, e.clear) for e in entries] == [
        (0, ("m1",), False),
        (1, ("m2",), False),
        (2, (), True),
    ]
    assert b.read(2, 5) == entries[2:]  # stops at the first entry not written yet
