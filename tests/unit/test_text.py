"""Messages built from other messages end in one full stop."""

from __future__ import annotations

import pytest

from assistant.reply.offline import answer_arithmetic
from assistant.text import end_sentence


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("restarted it in 1.2 s", "restarted it in 1.2 s."),
        ("No model file at x. Install it.", "No model file at x. Install it."),
        ("Is it running?", "Is it running?"),
        ("wait…  ", "wait…"),
    ],
)
def test_end_sentence_adds_a_full_stop_only_where_none_is(text: str, shown: str):
    assert end_sentence(text) == shown


def test_no_offline_arithmetic_message_ends_in_two_full_stops():
    for message in ("what's 1/0?", "what's 10**10000?", "what's 2**-99999?"):
        reply = answer_arithmetic(message)
        assert reply is None or not reply.endswith("..")
