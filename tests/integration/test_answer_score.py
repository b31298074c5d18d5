"""Answer scoring with the real offline tokenizer's vocabulary (the unit tests use a word list)."""

from __future__ import annotations

import pytest

from assistant.eval.answer_score import (
    MemoryTerms,
)


@pytest.mark.chroma  # reads the offline tokenizer's vocabulary
def test_real_vocabulary_marks_rare_words() -> None:
    terms = MemoryTerms.of(["I take levothyroxine and work as an engineer."])
    assert terms.terms.get("levothyroxine") == "rare"
    assert "engineer" not in terms.terms  # common English: a reply may well use it
