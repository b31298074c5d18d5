"""A session taken home: Markdown and JSON say what the screen said, estimates labelled."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace

from assistant.gates.base import GateDecision, Method
from assistant.page.export import session_json, session_markdown, stage_chart_svg
from assistant.talk import Beat
from assistant.turn.chat import Exchange
from assistant.turn.pipeline import Timings, Turn, Usage, Variant
from memory.records import Memory


def _turn(message: str, retrieve: bool, reply: str, *, variant=Variant.GATED, ms=300.0) -> Turn:
    memories = (Memory("m1", "Dinner with Alex on Thursday at 7:30pm.", 0.8, "", "seeded"),)
    return Turn(
        message=message,
        decision=GateDecision(
            retrieve,
            "meeting Alex" if retrieve else "",
            "needs your plans",
            Method.LOCAL,
            "local",
            4.0,
        ),
        memories=memories if retrieve else (),
        reply=reply,
        timings=Timings(
            gate_ms=4.0, search_ms=9.0, first_token_ms=ms, reply_ms=500.0, total_ms=520.0
        ),
        usage=Usage(memory_tokens=12 if retrieve else 0),
        variant=variant,
    )


BEATS = (
    Beat(1, 1, "When am I meeting Alex?", "retrieve", "The gate searches."),
    Beat(2, 2, "What's 2+2?", "retrieve", "A beat whose promise breaks."),
)


def _session() -> list[Exchange]:
    alex = Exchange(
        "When am I meeting Alex?",
        _turn("When am I meeting Alex?", True, "Thursday at 7:30pm."),
        beat=1,
    )
    sum_ = _turn("What's 2+2?", False, "4.")
    twin = _turn("What's 2+2?", True, "4, and dinner at 7:30pm!", variant=Variant.ALWAYS, ms=900.0)
    return [
        alex,
        Exchange("What's 2+2?", sum_, twin, beat=2),
        Exchange("typed aside", _turn("typed aside", False, "Sure.")),
    ]


def test_the_json_carries_every_exchange_its_beat_and_the_scoreboard() -> None:
    data = json.loads(session_json(_session(), BEATS))
    rows = data["exchanges"]
    assert [r["message"] for r in rows] == ["When am I meeting Alex?", "What's 2+2?", "typed aside"]
    assert rows[0]["beat"] == {
        "number": 1,
        "of": 2,
        "expect": "retrieve",
        "note": "The gate searches.",
        "as_expected": True,
    }
    assert rows[1]["beat"]["as_expected"] is False  # the talk expected retrieve; it skipped
    assert "beat" not in rows[2]  # typed between beats
    assert rows[0]["gated"]["memories"] == ["Dinner with Alex on Thursday at 7:30pm."]
    assert rows[1]["always_retrieve"]["reply"] == "4, and dinner at 7:30pm!"
    assert data["scoreboard"]["turns"] == 3 and data["scoreboard"]["skipped"] == 2


def test_the_markdown_reads_as_the_session_went_with_estimates_said_to_be() -> None:
    text = session_markdown(_session(), BEATS)
    for said in (
        "When am I meeting Alex?",
        "Thursday at 7:30pm.",
        "meeting Alex",
        "Dinner with Alex on Thursday at 7:30pm.",
        "Beat 2 / 2",
        "not as the talk expected",
        "A beat whose promise breaks.",
        "Always-retrieve twin",
        "## Scoreboard",
        "searches skipped: 2",
    ):
        assert said in text, said
    assert text.index("When am I meeting Alex?") < text.index("typed aside")
    # Compare mode ran on one exchange only: its first token is measured there.
    assert "measured by compare mode over 1 exchange)" in text
    alone = session_markdown([replace(e, always=None) for e in _session()])
    assert "estimate" in alone and "Beat" not in alone


def test_the_chart_is_an_svg_with_a_bar_per_stage_per_turn() -> None:
    svg = ET.fromstring(stage_chart_svg(_session()))
    bars = [
        r
        for r in svg.iter("{http://www.w3.org/2000/svg}rect")
        if r.find("{http://www.w3.org/2000/svg}title") is not None
    ]
    assert len(bars) == 3 * 4  # three turns, four stages each
    assert ET.fromstring(stage_chart_svg([])).tag.endswith("svg")  # an empty session draws
