"""The follow-up bench: the conversation gives the last turn what it needs, on a dev set."""

from __future__ import annotations

import pytest

from bench import followup_retrieval

pytestmark = pytest.mark.eval


def test_the_conversation_gives_follow_ups_their_memory_more_often_than_the_message_alone():
    results = followup_retrieval.run(("followup_nurse_dev",), ("alone", "joined", "mechanism"))
    totals = results["totals"]["all"]
    alone, joined, mechanism = totals["alone"], totals["joined"], totals["mechanism"]
    assert mechanism["answer_given"] >= alone["answer_given"] + 0.2
    # General follow-ups are not dragged into memory by the conversation.
    assert mechanism["general_searched"] <= alone["general_searched"]
    assert mechanism["general_searched"] <= joined["general_searched"]
    table = followup_retrieval.markdown(results)
    assert "| mechanism |" in table and "| joined |" in table
