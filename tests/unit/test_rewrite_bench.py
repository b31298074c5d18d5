"""The rewrite bench's scores on hand-made examples: BLEU-4, 13a tokens, term recall."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from bench.rewrite_bench import (
    MULTIPLE_REFS,
    SAMPLE,
    Row,
    concat_resolver,
    copy_resolver,
    corpus_bleu,
    human_agreement,
    needed_words,
    read_rows,
    recent_of,
    run,
    score,
    term_recall,
    tokenize_13a,
)

ZAPPA = {
    "History": [
        "Frank Zappa",
        "Disbandment",
        "What group disbanded?",
        "Zappa and the Mothers of Invention",
    ],
    "QuAC_dialog_id": "C_test_0",
    "Question": "When did they disband?",
    "Question_no": 2,
    "Rewrite": "When did Zappa and the Mothers of Invention disband?",
}


@pytest.fixture
def zappa(tmp_path) -> list[Row]:
    """One CANARD row, read back through the bench's own reader."""
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(ZAPPA) + "\n", encoding="utf-8")
    return read_rows(path)


def test_identical_text_scores_100():
    assert corpus_bleu(["When did Zappa disband?"], ["When did Zappa disband?"]).score == (
        pytest.approx(100.0)
    )


def test_bleu_by_hand():
    # 1-grams 5/6 ("the" twice, once in the reference), 2-grams 3/5, 3-grams 2/4,
    # 4-grams 1/3; equal lengths, so no brevity penalty.
    bleu = corpus_bleu(["the cat sat on the mat"], ["the cat sat on a mat"])
    expected = 100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert bleu.score == pytest.approx(expected)
    assert bleu.brevity_penalty == 1.0


def test_short_output_pays_the_brevity_penalty():
    # Every n-gram of the output is in the reference, but it is 4 tokens against 6.
    bleu = corpus_bleu(["the cat sat on"], ["the cat sat on a mat"])
    assert bleu.precisions == pytest.approx((100.0, 100.0, 100.0, 100.0))
    assert bleu.brevity_penalty == pytest.approx(math.exp(1 - 6 / 4))
    assert bleu.score == pytest.approx(100 * math.exp(1 - 6 / 4))


def test_bleu_pools_counts_over_the_corpus():
    # Alone, a two-word output has no 3- or 4-grams: BLEU 0. In a corpus its counts are
    # pooled with the other row's, as corpus BLEU does, so the total is not 0.
    assert corpus_bleu(["Zappa disbanded"], ["Zappa disbanded"]).score == 0.0
    pooled = corpus_bleu(
        ["Zappa disbanded", "When did Zappa disband ?"],
        ["Zappa disbanded", "When did Zappa disband ?"],
    )
    assert pooled.score == pytest.approx(100.0)


def test_tokenize_13a_splits_punctuation_but_not_numbers():
    assert tokenize_13a("Did Zappa's band (the Mothers) split?") == [
        "Did",
        "Zappa's",
        "band",
        "(",
        "the",
        "Mothers",
        ")",
        "split",
        "?",
    ]
    assert tokenize_13a("In 1969, 3.5 or 1,000.") == ["In", "1969", ",", "3.5", "or", "1,000", "."]


def test_needed_words_come_from_the_conversation_not_the_question(zappa):
    row = zappa[0]
    history = [row.title, row.section] + [t for pair in row.exchanges for t in pair]
    assert needed_words(row.question, row.rewrite, history) == ["zappa", "mothers", "invention"]
    # A word the person added that the conversation never said is no one's to find.
    assert needed_words("Anything else?", "Anything else besides Zappa?", ["Frank Zappa"]) == [
        "zappa"
    ]


def test_term_recall_counts_words_found_and_rows_fully_resolved():
    needs = [["zappa", "mothers", "invention"], ["zappa"], []]
    result = term_recall(
        ["When did Zappa disband?", "What did ZAPPA do?", "Where?"],
        needs,
    )
    assert (result.found, result.needed) == (2, 4)
    assert result.recall == pytest.approx(0.5)
    assert result.resolved == pytest.approx(0.5)  # the third row needs nothing: left out


def test_recent_is_the_titles_then_each_exchange_oldest_first(zappa):
    row = zappa[0]
    recent = recent_of(row)
    assert [(s.user, s.assistant) for s in recent] == [
        ("Frank Zappa", "Disbandment"),
        ("What group disbanded?", "Zappa and the Mothers of Invention"),
    ]
    assert copy_resolver(row.question, recent).query == "When did they disband?"
    assert concat_resolver(row.question, recent).query == (
        "What group disbanded? When did they disband?"
    )


@dataclass(frozen=True)
class _Resolved:
    query: str
    follow_up: bool


def test_a_resolver_that_writes_the_gold_rewrite_scores_full_marks(zappa):
    rows = zappa
    gold = {r.question: r.rewrite for r in rows}

    def perfect(message, recent):
        return _Resolved(gold[message], True)

    ours = score(rows, perfect)
    assert ours["bleu4"] == pytest.approx(100.0)
    assert ours["term_recall"] == pytest.approx(1.0)
    assert ours["follow_up_on_rewritten"] == pytest.approx(1.0)
    copied = score(rows, copy_resolver)
    assert copied["term_recall"] == 0.0
    assert copied["bleu4"] < ours["bleu4"]


def test_the_committed_sample_runs_the_baselines():
    assert len(read_rows(SAMPLE)) == 500
    assert human_agreement(MULTIPLE_REFS)["pairs"] == 100
    results = run(choice="copy", limit=50)
    assert results["rows"] == 50
    assert results["resolvers"]["copy"]["term_recall"] == 0.0
    assert 0 < results["resolvers"]["copy"]["bleu4"] < 100
