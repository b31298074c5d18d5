"""The follow-up bench: the resolver gives the last turn what it needs, on a dev set."""

from __future__ import annotations

import pytest

from bench import followup_retrieval

pytestmark = pytest.mark.eval


def test_the_resolver_gives_follow_ups_their_memory_more_often_than_the_message_alone():
    figures = followup_retrieval.run(("followup_nurse_dev",))["followup_nurse_dev"]
    alone, resolved = figures["message alone"], figures["resolver"]
    assert resolved["memory_answer_given"] >= alone["memory_answer_given"] + 0.2
    # General follow-ups are not dragged into memory by the conversation.
    assert resolved["general_searched"] <= alone["general_searched"]
    table = followup_retrieval.markdown({"followup_nurse_dev": figures})
    assert "| resolver |" in table and "| resolver's query |" in table
