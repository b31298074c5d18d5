"""Corrections in the app (issue 23): the "Wrong decision?" button, the re-run, the sidebar list.

AppTest drives the real app.py offline (local gate, offline responder) on a real Chroma
folder seeded with the demo persona; the factory tests build the real Assistant.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from assistant.gates.base import GateDecision, Method
from assistant.gates.corrections.actions import BUTTON_LABEL, RERUN_NOTE, open_corrections
from assistant.gates.corrections.gate import CorrectedGate
from assistant.runtime.local_model import ModelState, ModelStatus
from tests.integration.test_app import _start, _store, assistant_messages, badge_lines, send, turns


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """The app offline, on a fresh folder seeded with the demo persona (as in test_app)."""
    monkeypatch.setenv("MEMGATE_MEMORY_DIR", str(tmp_path / "memories"))
    for name in ("MEMGATE_GATE_MODE", "MEMGATE_CAPTURE", "MEMGATE_USER"):
        monkeypatch.delenv(name, raising=False)
    st.cache_resource.clear()  # it outlives an AppTest: each test gets its own Assistant
    yield _start()
    st.cache_resource.clear()


# The local gate skips it (its words say nothing personal), but the persona's memories say
# where: "I play pickup basketball at Mission Playground…". A wrong skip to correct.
WRONG_SKIP = "Where do I play basketball?"
# Skipped by the gate on its own too; its MiniLM cosine with WRONG_SKIP is 0.905.
REWORDING = "Where is it that I play basketball?"


def wrong_buttons(at: AppTest) -> list[Any]:
    """The "Wrong decision?" buttons on the page, in turn order."""
    return [b for b in at.button if b.label == BUTTON_LABEL]


def user_messages(at: AppTest) -> list[str]:
    """What the chat shows on the user's side, in order."""
    return [m.markdown[0].value for m in at.chat_message if m.name == "user"]


def book(at: AppTest) -> Any:
    """The app's corrections, opened by the test on the same folder."""
    return open_corrections(_store(at))


def click(at: AppTest, button: Any) -> AppTest:
    """Click a button and run the app."""
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_correcting_a_wrong_skip_reruns_with_memory_then_decides_a_rewording(app: AppTest):
    send(app, WRONG_SKIP)
    (first,) = turns(app)
    assert not first.decision.retrieve and first.decision.method is Method.LOCAL
    (button,) = wrong_buttons(app)
    assert button.key == f"wrong-{first.id}"
    assert "should have searched memory" in button.help

    click(app, button)
    first_again, rerun = turns(app)
    assert first_again == first  # the wrong answer stays: nothing the user saw is lost
    assert rerun.message == WRONG_SKIP and rerun.decision.retrieve
    assert rerun.decision.method is Method.CORRECTION and rerun.decision.reason == RERUN_NOTE
    assert any("Mission Playground" in m.text for m in rerun.memories)
    assert user_messages(app) == [WRONG_SKIP, WRONG_SKIP]  # the re-run is a new turn
    bubbles = assistant_messages(app)
    assert RERUN_NOTE in badge_lines(bubbles[1])[0].replace("\\", "")
    # The corrected turn now says what the user said of it, and has no button left.
    assert "you corrected this: should have searched memory" in " ".join(
        c.value.replace("\\", "") for c in bubbles[0].caption
    )
    assert [b.key for b in wrong_buttons(app)] == [f"wrong-{rerun.id}"]
    assert "Corrections (1)" in [h.value for h in app.sidebar.subheader]
    (kept,) = book(app).list()
    assert kept.message == WRONG_SKIP and kept.retrieve

    send(app, REWORDING)
    decided = turns(app)[-1]
    assert decided.decision.retrieve and decided.decision.method is Method.CORRECTION
    line = badge_lines(assistant_messages(app)[-1])[0].replace("\\", "")
    assert "decided by your correction" in line and WRONG_SKIP.rstrip("?") in line


def test_deleting_a_correction_in_the_sidebar_restores_the_gates_own_decision(app: AppTest):
    send(app, WRONG_SKIP)
    click(app, wrong_buttons(app)[0])
    (kept,) = book(app).list()
    send(app, REWORDING)
    assert turns(app)[-1].decision.method is Method.CORRECTION

    click(app, app.button(key=f"del-correction-{kept.id}"))
    assert book(app).list() == []
    assert "Corrections (0)" in [h.value for h in app.sidebar.subheader]
    # The first turn offers its button again: the correction it showed is gone.
    assert f"wrong-{turns(app)[0].id}" in [b.key for b in wrong_buttons(app)]
    # In a new conversation (here it would follow up on the re-run's memories) the gate
    # decides the rewording itself again.
    click(app, next(b for b in app.sidebar.button if b.label == "New conversation"))
    send(app, REWORDING)
    (own,) = turns(app)
    assert not own.decision.retrieve and own.decision.method is Method.LOCAL


def test_correcting_a_retrieve_records_a_skip_and_answers_nothing_again(app: AppTest):
    send(app, "When am I meeting Alex?")
    (first,) = turns(app)
    assert first.decision.retrieve
    (button,) = wrong_buttons(app)
    assert "didn't need memory" in button.help
    click(app, button)
    assert turns(app) == [first]  # no re-run: the reply it got used memory it didn't need
    (kept,) = book(app).list()
    assert not kept.retrieve
    send(app, "When am I meeting Alex?")
    again = turns(app)[-1]
    assert not again.decision.retrieve and again.decision.method is Method.CORRECTION
    assert again.memories == ()


def test_a_failed_open_turn_has_no_correction_button(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assistant.gates.local import LocalGate

    def broken(self: object, message: str) -> None:
        raise RuntimeError("weights unreadable")

    send(app, "What's 2+2?")  # a judged turn first: its button shows the page draws them
    monkeypatch.setattr(LocalGate, "decide", broken)
    send(app, "What's 3+3?")
    judged, failed = turns(app)
    assert failed.decision.failed_open and failed.decision.label == "failed open"
    assert [b.key for b in wrong_buttons(app)] == [f"wrong-{judged.id}"]
    assert "FAILED OPEN" in badge_lines(assistant_messages(app)[1])[0]


def test_a_rule_mode_badge_has_no_correction_button(app: AppTest) -> None:
    app.segmented_control(key="gate_mode").set_value("always").run()
    send(app, "What's 2+2?")
    assert turns(app)[0].decision.method is Method.RULE
    assert wrong_buttons(app) == []


# ---- the vocabulary rule's decisions are corrected like the gate's (issue 29) ---------

# The local gate skips it (nothing personal in its words), but the demo persona's memories
# mention "a climate-tech startup": the vocabulary rule retrieves it.
RULE_RETRIEVE = "What's the startup called?"
# Skipped by the gate and retrieved by the rule too; MiniLM cosine with RULE_RETRIEVE 0.951.
RULE_REWORDING = "The startup is called what?"


def correct_the_rule(at: AppTest) -> Any:
    """Ask RULE_RETRIEVE, check the rule decided it, and press its "Wrong decision?" button."""
    send(at, RULE_RETRIEVE)
    (first,) = turns(at)
    assert first.decision.retrieve and first.decision.method is Method.VOCABULARY
    line = badge_lines(assistant_messages(at)[0])[0].replace("\\", "")
    assert "mentions startup, in your memories" in line
    (button,) = wrong_buttons(at)
    assert button.key == f"wrong-{first.id}" and "didn't need memory" in button.help
    click(at, button)
    assert turns(at) == [first]  # a corrected retrieve is not answered again
    return first


def plain(values: list[Any]) -> list[str]:
    """Element values as the reader sees them (the app escapes markdown characters)."""
    return [v.value.replace("\\", "") for v in values]


def test_a_rule_decision_is_corrected_credited_listed_and_deletable(app: AppTest) -> None:
    correct_the_rule(app)
    # Credited on the corrected turn, listed in the sidebar, kept in the user's book.
    captions = " ".join(plain(assistant_messages(app)[0].caption))
    assert "you corrected this: didn't need memory" in captions
    assert wrong_buttons(app) == []
    assert "Corrections (1)" in [h.value for h in app.sidebar.subheader]
    assert RULE_RETRIEVE in plain(app.sidebar.markdown)  # the list's row
    (kept,) = book(app).list()
    assert (kept.message, kept.retrieve) == (RULE_RETRIEVE, False)
    assert kept.reason == "mentions startup, in your memories"

    # A rewording: the correction decides it, and the rule does not turn it back.
    send(app, RULE_REWORDING)
    decided = turns(app)[-1]
    assert not decided.decision.retrieve and decided.decision.method is Method.CORRECTION
    assert decided.memories == ()
    line = badge_lines(assistant_messages(app)[-1])[0].replace("\\", "")
    assert "SKIPPED" in line and f'decided by your correction: "{RULE_RETRIEVE}"' in line

    # Deleted in the sidebar: the button is back, and the rule decides the rewording again.
    click(app, app.button(key=f"del-correction-{kept.id}"))
    assert book(app).list() == []
    assert f"wrong-{turns(app)[0].id}" in [b.key for b in wrong_buttons(app)]
    click(app, next(b for b in app.sidebar.button if b.label == "New conversation"))
    send(app, RULE_REWORDING)
    (again,) = turns(app)
    assert again.decision.retrieve and again.decision.method is Method.VOCABULARY
    assert any("startup" in m.text for m in again.memories)


# The app started again in a new process on the same memory folder: it asks `argv[1]`.
RESTARTED_APP = """
import json, sys
from tests.integration.test_app import _start, assistant_messages, badge_lines, send, turns
at = send(_start(), sys.argv[1])
(turn,) = turns(at)
print(json.dumps({
    "retrieve": turn.decision.retrieve,
    "method": turn.decision.method.value,
    "badge": badge_lines(assistant_messages(at)[0])[0].replace("\\\\", ""),
    "sidebar": [h.value for h in at.sidebar.subheader],
}))
"""


def test_a_corrected_rule_decision_still_decides_after_a_restart(app: AppTest) -> None:
    import json
    import subprocess
    import sys

    correct_the_rule(app)
    _store(app).close()  # this process lets go of the folder, as an app that exits does
    done = subprocess.run(
        [sys.executable, "-c", RESTARTED_APP, RULE_REWORDING],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert (shown["retrieve"], shown["method"]) == (False, "correction")
    assert f'decided by your correction: "{RULE_RETRIEVE}"' in shown["badge"]
    assert "Corrections (1)" in shown["sidebar"]


# ---- the factory wraps every judging gate it builds ----------------------------------


def test_the_factory_wraps_judging_gates_and_not_rules(tmp_path: Path) -> None:
    from assistant.config import Settings
    from assistant.turn.factory import build_assistant

    assistant = build_assistant(
        Settings(memory_dir=tmp_path / "m", local_model="off"), seed_if_empty=False
    )
    try:
        assert assistant.corrections is not None
        assert isinstance(assistant.pipeline.gate, CorrectedGate)
        assert assistant.gate("local") is assistant.pipeline.gate
        assert assistant.pipeline.gate.book is assistant.corrections
        for rule in ("always", "never", "length"):
            assert not isinstance(assistant.gate(rule), CorrectedGate)
    finally:
        assistant.store.close()


class _FailedModel:
    """A local model that could not start (what LocalModel reports then)."""

    status = ModelStatus(ModelState.FAILED, error="the test switched the model off")


def test_the_offline_fallback_gate_is_wrapped_too(tmp_path: Path, fake_api: Any) -> None:
    from assistant.config import Settings
    from assistant.turn.factory import build_assistant
    from assistant.turn.front import Assistant

    settings = Settings(
        memory_dir=tmp_path / "m", base_url=fake_api.url, gate_mode="cascade", local_model="off"
    )
    built = build_assistant(settings, seed_if_empty=False)
    assert isinstance(built.pipeline.gate, CorrectedGate)
    assert isinstance(built.gate("llm"), CorrectedGate)
    # The same wiring in front of a local model that failed to start: the next turn's
    # preparation swaps in the offline wiring.
    failed = _FailedModel()
    assistant = Assistant(settings, built.store, built.wiring, local=failed)  # type: ignore[arg-type]
    try:
        assert (assistant.prepare_turn() or "").startswith("Answering offline")
        assert assistant.offline and assistant.pipeline.gate.name == "local"
        assert isinstance(assistant.pipeline.gate, CorrectedGate)
        assert assistant.pipeline.gate.book is assistant.corrections
    finally:
        assistant.store.close()


def test_a_rerun_in_compare_mode_forces_only_the_gated_twin(app: AppTest) -> None:
    app.toggle(key="compare").set_value(True).run()
    send(app, WRONG_SKIP)
    gated, always = turns(app)
    assert not gated.decision.retrieve and always.variant == "always"
    (button,) = wrong_buttons(app)  # the always twin judged nothing: no button on it
    assert button.key == f"wrong-{gated.id}"
    click(app, button)
    _, _, rerun, rerun_always = turns(app)
    assert rerun.variant == "gated" and rerun.decision.reason == RERUN_NOTE
    assert rerun_always.variant == "always" and rerun_always.decision.method is Method.RULE
    assert user_messages(app) == [WRONG_SKIP, WRONG_SKIP]


# ---- the pipeline answers with a forced decision -------------------------------------


def test_a_forced_decision_is_used_without_asking_the_gate(tmp_path: Path) -> None:
    from assistant.gates.corrections.actions import correct, rerun_of
    from assistant.reply.offline import OfflineResponder
    from assistant.turn.pipeline import Pipeline
    from memory.store import MemoryStore

    class AskedGate:
        """A judging gate that must not be asked: the decision was made by the user."""

        name = "local"

        def decide(self, message: str, conversation: object = None) -> Any:
            raise AssertionError(f"the gate was asked about {message!r}")

    store = MemoryStore.persistent(tmp_path / "m", "forced")
    try:
        store.add("I play pickup basketball at Mission Playground on Sunday afternoons.")
        pipeline = Pipeline(gate=AskedGate(), store=store, responder=OfflineResponder())
        skipped = GateDecision(False, "", "general question", Method.LOCAL, gate="local")
        rerun = rerun_of(correct(open_corrections(store), WRONG_SKIP, skipped), WRONG_SKIP)
        assert rerun is not None
        turn = pipeline.respond(rerun.message, decision=rerun.decision)
        assert turn.decision is rerun.decision and turn.searched
        assert any("Mission Playground" in m.text for m in turn.memories)
        assert "Mission Playground" in turn.reply
    finally:
        store.close()


# ---- the sidebar list when the corrections cannot be read -----------------------------


def listing_corrections_raises(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """Every read of the corrections list, by the app's sidebar too, raises `error`."""
    from memory.corrections import CorrectionBook

    def fails(self: object) -> list[Any]:
        raise error

    monkeypatch.setattr(CorrectionBook, "list", fails)


def test_corrections_that_cannot_be_read_are_one_line_in_the_sidebar(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.records import MemoryStoreError

    gone = "The Chroma server at 127.0.0.1:9 is not answering (ConnectError)"
    listing_corrections_raises(monkeypatch, MemoryStoreError(gone))
    send(app, "What's 2+2?")  # the page, and the turn, go on
    errors = [e.value.replace("\\", "") for e in app.sidebar.error]
    assert any("is not answering" in e for e in errors), errors
    assert "Corrections" in [h.value for h in app.sidebar.subheader]


def test_other_failures_of_the_corrections_list_are_not_swallowed(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing_corrections_raises(monkeypatch, RuntimeError("a bug, not a server that went away"))
    app.run()
    assert [e.value for e in app.exception if "a bug" in e.value]
