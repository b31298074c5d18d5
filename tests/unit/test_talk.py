"""Talk files: what a presenter writes, read strictly, and how a rehearsal reports a beat."""

from __future__ import annotations

import json

import pytest

from assistant.talk import DEFAULT_TALK, Beat, Rehearsed, TalkError, beat_line, read_talk


def _talk(tmp_path, *lines: str):
    path = tmp_path / "talk.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_talk_is_one_beat_a_line_in_order(tmp_path) -> None:
    path = _talk(
        tmp_path,
        json.dumps({"say": "What's 2+2?", "expect": "skip", "note": "no search"}),
        "",
        json.dumps({"say": "Tell me a joke", "compare": True}),
    )
    first, second = read_talk(path)
    assert (first.number, first.line, first.say, first.expect) == (1, 1, "What's 2+2?", "skip")
    assert first.note == "no search" and not first.compare
    assert (second.number, second.line, second.expect, second.compare) == (2, 3, None, True)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"say": "hi"', "not valid JSON"),
        ('["say", "hi"]', "JSON object"),
        ('{"expect": "skip"}', '"say" is required'),
        ('{"say": "   "}', '"say" is required'),
        ('{"say": "hi", "expect": "maybe"}', '"expect" is "retrieve" or "skip"'),
        ('{"say": "hi", "expcet": "skip"}', "unknown field 'expcet'"),
        ('{"say": "hi", "compare": "yes"}', '"compare" is true or false'),
        ('{"say": "hi", "note": 3}', '"note" is text'),
    ],
)
def test_a_malformed_beat_names_the_file_the_line_and_what_is_wrong(tmp_path, line, says) -> None:
    path = _talk(tmp_path, json.dumps({"say": "fine"}), line)
    with pytest.raises(TalkError) as caught:
        read_talk(path)
    assert str(path) in str(caught.value) and "line 2" in str(caught.value)
    assert says in str(caught.value)


def test_an_empty_or_missing_talk_is_an_error_too(tmp_path) -> None:
    with pytest.raises(TalkError, match="no beats"):
        read_talk(_talk(tmp_path, "", "  "))
    with pytest.raises(TalkError, match="cannot read"):
        read_talk(tmp_path / "nowhere.jsonl")


def test_the_default_talk_tells_the_story_with_promises_to_check() -> None:
    beats = read_talk(DEFAULT_TALK)
    assert 6 <= len(beats) <= 10
    assert {b.expect for b in beats} >= {"retrieve", "skip"}
    assert any(b.compare for b in beats)  # over-interpretation, shown side by side
    assert all(b.note for b in beats)


def _played(beat: Beat, query: str | None, first_token_ms: float | None) -> Rehearsed:
    """A beat played to a decision: retrieve with `query`, or skip when it is None."""
    from assistant.gates.base import GateDecision, Method
    from assistant.turn.chat import Exchange
    from assistant.turn.pipeline import Timings, Turn

    decision = GateDecision(query is not None, query or "", "why", Method.LOCAL, "local", 4.2)
    timings = Timings(gate_ms=4.2, first_token_ms=first_token_ms)
    return Rehearsed(beat, Exchange(beat.say, Turn(beat.say, decision, timings=timings)))


def test_a_beat_that_got_the_other_decision_is_a_surprise_and_says_so() -> None:
    beat = Beat(3, 4, "What time?", expect="retrieve")
    got = _played(beat, None, 812.0)
    assert got.surprise
    line = beat_line(got, 8)
    assert line.startswith("3/8 SURPRISE") and "expected retrieve" in line and "812 ms" in line
    kept = _played(beat, "When am I meeting Alex? What time?", None)
    assert not kept.surprise and "query" in beat_line(kept, 8)
    assert not _played(Beat(1, 1, "hi"), None, None).surprise  # nothing promised


def test_a_talks_place_moves_on_to_the_last_beat_sent_and_starts_again() -> None:
    from assistant.talk import load_talk

    played = load_talk()
    total = len(played.beats)
    assert played.take().number == 1 and played.upcoming.number == 2
    played.reached(4)  # the chat box sent beats 2 to 4 in a burst
    assert played.upcoming.number == 5
    played.reached(2)  # a late rerun never moves it back
    assert played.upcoming.number == 5
    played.reached(total + 3)
    assert played.upcoming is None and played.take() is None
    played.restart()
    assert played.upcoming.number == 1 and played.run == 1
