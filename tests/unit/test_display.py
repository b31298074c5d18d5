"""The text the UI shows, as pure functions (assistant/page/display.py): no Streamlit needed."""

from __future__ import annotations

from assistant.gates.rules import always_gate, never_gate
from assistant.page.display import (
    compare_line,
    details_title,
    fmt_ms,
    loading_label,
    medians_line,
    stage_table,
)
from assistant.page.session import CompareMedians
from assistant.runtime.local_model import ModelState, ModelStatus
from assistant.turn.chat import Exchange
from assistant.turn.pipeline import Timings, Turn, Usage, Variant
from memory.records import Memory


def _turn(retrieve: bool, *, variant: Variant = Variant.GATED, memories: int = 0) -> Turn:
    gate = always_gate() if retrieve else never_gate()
    found = tuple(Memory(f"m{i}", "a fact", 0.8, "", "seeded") for i in range(memories))
    return Turn(
        message="When am I meeting Alex?",
        decision=gate.decide("When am I meeting Alex?"),
        memories=found,
        timings=Timings(first_token_ms=12.0),
        usage=Usage(memory_tokens=5 * memories),
        variant=variant,
    )


def test_compare_line_says_which_twin_ran_first() -> None:
    gated = _turn(False)
    always = _turn(True, variant=Variant.ALWAYS, memories=2)
    line = compare_line(Exchange(gated.message, gated, always))
    assert "gated ran first" in line and "always-retrieve ~10" in line
    later_gated = _turn(False)  # built after `always`: the twin ran first
    assert "always-retrieve ran first" in compare_line(Exchange("m", later_gated, always))
    assert compare_line(Exchange("m", gated)) == ""


def test_medians_line_gives_each_twins_running_median() -> None:
    line = medians_line(CompareMedians(3, 812.4, 1140.0))
    assert line == (
        "session median first token (3 exchanges): gated 812 ms, always-retrieve 1,140 ms"
    )
    assert "(1 exchange)" in medians_line(CompareMedians(1, 5.25, None))
    assert medians_line(CompareMedians()) == ""


def test_details_title_and_stage_table() -> None:
    assert details_title(_turn(False)) == "Details · memory not searched"
    assert details_title(_turn(True, memories=1)) == "Details · 1 memory used"
    table = stage_table(_turn(False))
    assert table.startswith("| gate | search |") and "| skipped |" in table


def test_times_and_loading_labels_read_well() -> None:
    assert (fmt_ms(None), fmt_ms(3.25), fmt_ms(1234.0)) == ("–", "3.2 ms", "1,234 ms")
    assembling = ModelStatus(ModelState.ASSEMBLING, "slice 3 of 22", progress=0.5)
    assert loading_label(assembling) == "Setting up the local model (once): slice 3 of 22 50%"
    assert loading_label(ModelStatus(ModelState.LOADING)) == "Loading the local model… loading"
