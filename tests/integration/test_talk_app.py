"""A talk in the app (AppTest, offline): Next sends each beat through the inbox, a beat that
gets the other decision is flagged, the scoreboard and the downloads follow the session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st

from tests.integration.test_app import BADGE, _start, badge_lines, send


@pytest.fixture
def talk_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMGATE_MEMORY_DIR", str(tmp_path / "memories"))
    for name in ("MEMGATE_GATE_MODE", "MEMGATE_CAPTURE", "MEMGATE_USER", "MEMGATE_TALK"):
        monkeypatch.delenv(name, raising=False)
    talk = tmp_path / "talk.jsonl"
    beats = [
        {"say": "When am I meeting Alex?", "expect": "retrieve", "note": "The gate searches."},
        {"say": "What's 2+2?", "expect": "retrieve", "note": "The slides are wrong here."},
        {"say": "Tell me a joke", "expect": "skip", "compare": True},
    ]
    talk.write_text("".join(json.dumps(b) + "\n" for b in beats), encoding="utf-8")
    monkeypatch.setenv("MEMGATE_TALK", str(talk))  # as `memory-gate demo --talk FILE` sets it
    st.cache_resource.clear()
    yield _start()
    st.cache_resource.clear()


def _next(at) -> None:
    at.button(key="talk-next").click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_next_plays_each_beat_as_if_typed_and_flags_the_one_that_surprises(talk_app) -> None:
    at = talk_app
    assert at.button(key="talk-next").label == "Next · 1 / 3"
    assert any("The gate searches" in c.value for c in at.caption)  # the presenter's note
    _next(at)
    send(at, "Plan my weekend")  # typed between beats: it stays in the chat, with no beat
    _next(at)
    _next(at)
    records = at.session_state["exchanges"]
    assert [(e.message, e.beat) for e in records] == [
        ("When am I meeting Alex?", 1),
        ("Plan my weekend", None),
        ("What's 2+2?", 2),
        ("Tell me a joke", 3),
    ]
    assert records[3].always is not None  # the beat asked for compare mode
    bubbles = [m for m in at.chat_message if m.name == "assistant"]
    flags = [line for b in bubbles for line in badge_lines(b) if "talk expected" in line]
    assert len(flags) == 1 and "the talk expected retrieve" in flags[0]
    assert BADGE["skipped"] in flags[0]  # on the 2+2 badge
    assert any("beat 2 / 3" in c.value for b in bubbles for c in b.caption)
    assert not [b for b in at.button if b.key == "talk-next"]  # all beats sent


def test_the_scoreboard_and_the_downloads_follow_the_session(talk_app) -> None:
    at = talk_app
    _next(at)
    _next(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["searches skipped"] == "1 of 2"
    assert metrics["first token: gated vs always"]  # measured or labelled an estimate
    markdown = next(b for b in at.get("download_button") if b.proto.label == "Markdown")
    assert markdown is not None
    record = at.session_state["exchanges"]
    from assistant.page.export import session_markdown

    text = session_markdown(record, at.session_state["talk"].beats)
    assert "Beat 2 / 3, expected retrieve — **not as the talk expected**" in text
