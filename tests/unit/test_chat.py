"""The home of a message (assistant/turn/chat.py), with a scripted model and a list for memory."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from assistant.config import Settings
from assistant.gates.base import GateDecision, Method
from assistant.gates.llm import LlmGate
from assistant.gates.rules import always_gate, never_gate
from assistant.reply.capture import Capturer
from assistant.reply.offline import OfflineResponder
from assistant.reply.respond import ModelResponder, ReplySource
from assistant.runtime.local_model import ModelState, ModelStatus
from assistant.turn.chat import Chat, Exchange, ReplyHooks, TurnOptions
from assistant.turn.front import Assistant
from assistant.turn.pipeline import MAX_MESSAGE_CHARS, Pipeline, Turn, Variant
from assistant.turn.wiring import GateShelf, Wiring
from tests.fakes import ListSearch, ScriptedModel, prompt_of

CAPTURE = "Extract durable facts"
GATE = "retrieval gate"


def _script(facts: list[str], retrieve: bool = False) -> Any:
    """Capture finds `facts`, the gate answers `retrieve`, and replies say "Nice bike!"."""

    def reply(request: dict[str, Any]) -> str:
        prompt = prompt_of(request)
        if CAPTURE in prompt:
            return json.dumps({"facts": facts})
        if GATE in prompt:
            return json.dumps({"retrieve": retrieve, "query": "bike", "reason": "user's news"})
        return "Nice bike!"

    return reply


def _pipeline(model: ScriptedModel, search: ListSearch) -> Pipeline:
    return Pipeline(
        gate=LlmGate(model, "gate"),
        store=search,  # type: ignore[arg-type] - a list stands in for the store
        responder=ModelResponder(model, "chat"),
        capturer=Capturer(search, model, "gate"),  # type: ignore[arg-type]
    )


def test_compare_mode_answers_twice_and_captures_once(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script(["My bike is a blue Brompton."])
    chat = Chat.fixed(_pipeline(scripted_model, search))
    exchange = chat.answer(
        "Remember that my bike is a blue Brompton", options=TurnOptions(compare=True)
    )
    gated, always = exchange.gated, exchange.always
    assert always is not None
    assert (gated.variant, always.variant) == (Variant.GATED, Variant.ALWAYS)
    assert not gated.decision.retrieve and always.decision.retrieve
    assert gated.capture is not None and gated.capture.saved == ("My bike is a blue Brompton.",)
    assert always.capture is None
    assert len(scripted_model.prompts(CAPTURE)) == 1
    assert search.count() == 4


def test_capture_off_asks_nothing_and_saves_nothing(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script(["My bike is a blue Brompton."])
    exchange = Chat.fixed(_pipeline(scripted_model, search)).answer(
        "Remember that my bike is a blue Brompton", options=TurnOptions(capture=False)
    )
    assert exchange.gated.capture is None and not scripted_model.prompts(CAPTURE)
    assert search.count() == 3


def test_compare_mode_alternates_which_twin_runs_first(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script([])
    chat = Chat.fixed(_pipeline(scripted_model, search))
    both = TurnOptions(compare=True, capture=False)
    first = chat.answer("What's 2+2?", options=both)
    second = chat.answer("Tell me a joke", [first], options=both)
    assert not first.always_ran_first and second.always_ran_first


def test_the_model_sees_each_earlier_exchange_once(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script([])
    chat = Chat.fixed(_pipeline(scripted_model, search))
    first = chat.answer("What's 2+2?", options=TurnOptions(compare=True, capture=False))
    scripted_model.calls.clear()
    chat.answer("And 3+3?", [first], options=TurnOptions(capture=False))
    (reply,) = [c for c in scripted_model.calls if GATE not in prompt_of(c)]
    users = [m for m in reply["messages"] if m["role"] == "user"]
    assert len(users) == 2  # the first exchange (its gated turn only), then this message


# ---- compare mode: each twin follows its own conversation (issue 28 part 5) ----------


def _twin_of(request: dict[str, Any]) -> str:
    """Which twin sent a reply request: the gated one here never searches, so its message
    goes alone; the always-retrieve twin's carries a memory note before the words."""
    return "always" if len(request["messages"][-1]["content"]) == 2 else "gated"


def _twin_script(request: dict[str, Any]) -> str:
    """Replies that say which twin wrote them, and to what."""
    words = request["messages"][-1]["content"][-1]["text"]
    return f"{_twin_of(request)} answer to {words}"


def _reply_calls(model: ScriptedModel) -> dict[str, dict[str, Any]]:
    """The last reply request of each twin."""
    return {_twin_of(c): c for c in model.calls if GATE not in prompt_of(c)}


def _earlier_replies(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "assistant"]


def _never_chat(model: ScriptedModel, search: ListSearch) -> Chat:
    model.script = _twin_script
    responder = ModelResponder(model, "chat")
    return Chat.fixed(Pipeline(gate=never_gate(), store=search, responder=responder))  # type: ignore[arg-type]


def test_each_twin_follows_its_own_conversation(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    chat = _never_chat(scripted_model, search)
    both = TurnOptions(compare=True, capture=False)
    first = chat.answer("When is dinner with Alex?", options=both)
    assert first.always is not None
    assert first.gated.reply == "gated answer to When is dinner with Alex?"
    assert first.always.reply == "always answer to When is dinner with Alex?"
    scripted_model.calls.clear()
    chat.answer("At what time?", [first], both)
    calls = _reply_calls(scripted_model)
    # Each twin's history holds its own earlier reply, never the other twin's...
    assert _earlier_replies(calls["gated"]) == [first.gated.reply]
    assert _earlier_replies(calls["always"]) == [first.always.reply]
    # ...and its own earlier retrieval: only the always twin was sent Alex's dinner before,
    # and only its follow-up carries it.
    assert "7:30pm" in prompt_of(calls["always"])
    assert "7:30pm" not in prompt_of(calls["gated"])


def test_compare_switched_on_mid_conversation_continues_the_gated_one(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    chat = _never_chat(scripted_model, search)
    alone = chat.answer("When is dinner with Alex?", options=TurnOptions(capture=False))
    scripted_model.calls.clear()
    chat.answer("At what time?", [alone], TurnOptions(compare=True, capture=False))
    # No always-retrieve twin before: both twins carry on from what the user saw.
    calls = _reply_calls(scripted_model)
    assert (
        _earlier_replies(calls["gated"]) == _earlier_replies(calls["always"]) == [alone.gated.reply]
    )


def test_a_hosted_endpoint_is_never_sent_a_slot(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    chat = _never_chat(scripted_model, search)
    chat.answer("When is dinner with Alex?", options=TurnOptions(compare=True, capture=False))
    assert sorted(_reply_calls(scripted_model)) == ["always", "gated"]
    assert all("id_slot" not in json.dumps(call) for call in scripted_model.calls)


def test_a_failed_exchange_keeps_the_message(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    chat = Chat.fixed(_pipeline(scripted_model, search))
    # A gate mode this wiring cannot run breaks the exchange before any reply.
    exchange = chat.answer("When am I meeting Alex?", options=TurnOptions(gate_mode="cascade"))
    assert exchange.message == exchange.gated.message == "When am I meeting Alex?"
    assert exchange.gated.error is not None and "this turn failed" in exchange.gated.error
    assert exchange.gated.decision.failed_open and exchange.always is None
    assert not scripted_model.calls


def test_a_preparation_that_raises_is_a_failed_exchange(search: ListSearch) -> None:
    pipeline = Pipeline(gate=never_gate(), store=search, responder=OfflineResponder())  # type: ignore[arg-type]

    def broken(_on_wait: object = None) -> str | None:
        raise RuntimeError("the model server vanished")

    wiring = Wiring(pipeline=pipeline)
    exchange = Chat(lambda: wiring, broken).answer("hello there")
    assert exchange.gated.error is not None and "vanished" in exchange.gated.error


def test_notices_of_preparation_and_of_the_turn_are_joined(search: ListSearch) -> None:
    pipeline = Pipeline(gate=never_gate(), store=search, responder=OfflineResponder())  # type: ignore[arg-type]
    wiring = Wiring(pipeline=pipeline)
    chat = Chat(lambda: wiring, lambda _on_wait=None: "Restarted the local model.")
    exchange = chat.answer("x" * (MAX_MESSAGE_CHARS + 5), options=TurnOptions(capture=False))
    notice = exchange.gated.notice or ""
    assert notice.startswith("Restarted the local model. Your message was")


def test_hooks_see_each_decision_and_the_streamed_reply(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script([])
    seen: list[tuple[Variant, str]] = []

    def open_turn(variant: Variant, source: ReplySource) -> ReplyHooks:
        assert source is ReplySource.MODEL
        return ReplyHooks(
            on_decision=lambda d: seen.append((variant, d.label)),
            on_text=lambda piece: seen.append((variant, piece)),
        )

    Chat.fixed(_pipeline(scripted_model, search)).answer(
        "What's 2+2?", options=TurnOptions(compare=True, capture=False), open_turn=open_turn
    )
    gated = [text for v, text in seen if v is Variant.GATED]
    always = [text for v, text in seen if v is Variant.ALWAYS]
    assert gated[0] == "skipped" and "".join(gated[1:]) == "Nice bike!"
    assert always[0] == "retrieved" and "".join(always[1:]) == "Nice bike!"


# ---- the wiring snapshot ------------------------------------------------------------


@dataclass
class _LocalModel:
    """The parts of LocalModel the assistant reads: a status that the test sets."""

    status: ModelStatus = field(default_factory=lambda: ModelStatus(ModelState.READY))
    restarted: str = ""

    def wait_ready(self, timeout: float | None = None) -> ModelStatus:
        return self.status

    def ensure_running(self) -> str:
        return self.restarted

    def fail(self) -> None:
        """The model could not load: a bad file."""
        self.status = ModelStatus(ModelState.FAILED, error="bad file")


def _assistant(model: ScriptedModel, search: ListSearch) -> tuple[Assistant, _LocalModel]:
    settings = Settings(gate_mode="local", base_url="http://127.0.0.1:1")
    gates = GateShelf.for_settings(settings, model, {"always": always_gate()})
    pipeline = Pipeline(
        gate=gates.get("always"),
        store=search,  # type: ignore[arg-type]
        responder=ModelResponder(model, "chat"),
        capturer=Capturer(search, model, "gate"),  # type: ignore[arg-type]
    )
    local = _LocalModel()
    wiring = Wiring(pipeline=pipeline, client=model, gates=gates)
    return Assistant(settings, search, wiring, local), local  # type: ignore[arg-type]


@pytest.fixture
def failed(scripted_model: ScriptedModel, search: ListSearch) -> tuple[Assistant, Wiring]:
    """An assistant whose local model failed after it built its wiring, and that wiring."""
    assistant, local = _assistant(scripted_model, search)
    before = assistant.wiring
    local.fail()
    return assistant, before


def test_reading_the_status_of_a_failed_model_changes_nothing(
    failed: tuple[Assistant, Wiring],
) -> None:
    assistant, before = failed
    assert assistant.offline and "bad file" in (assistant.offline_reason or "")
    assert "llm" not in assistant.available_gate_modes
    assert assistant.wiring is before  # only a turn swaps it


def test_a_failed_model_swaps_the_whole_wiring_at_the_next_turn(
    failed: tuple[Assistant, Wiring], scripted_model: ScriptedModel
) -> None:
    assistant, before = failed
    exchange = assistant.chat.answer("What's 2+2?", options=TurnOptions(capture=False))
    after = assistant.wiring
    assert after is not before and after.offline and before.client is scripted_model
    # The old snapshot is untouched: a turn still running on it finishes on it.
    assert isinstance(before.pipeline.responder, ModelResponder)
    assert isinstance(after.pipeline.responder, OfflineResponder)
    assert after.gate("always") is before.gate("always")  # gates that run offline are kept
    assert exchange.gated.reply_source is ReplySource.OFFLINE and "2+2 = 4" in exchange.gated.reply
    assert (exchange.gated.notice or "").startswith("Answering offline: the local model could not")
    assert not scripted_model.calls


def test_the_front_keeps_one_chat_that_follows_a_swapped_wiring(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    assistant, local = _assistant(scripted_model, search)
    chat = assistant.chat
    assert assistant.chat is chat  # built once, not on every read
    local.fail()
    exchange = assistant.answer("What's 2+2?", options=TurnOptions(capture=False))
    assert assistant.chat is chat and assistant.wiring.offline
    assert exchange.gated.reply_source is ReplySource.OFFLINE and "2+2 = 4" in exchange.gated.reply


def test_a_front_over_a_fixed_pipeline_answers_as_its_chat(search: ListSearch) -> None:
    pipeline = Pipeline(gate=never_gate(), store=search, responder=OfflineResponder())  # type: ignore[arg-type]
    front = Assistant.over(pipeline)
    exchange = front.answer("What's 2+2?", options=TurnOptions(capture=False))
    assert front.pipeline is pipeline and front.prepare_turn() is None
    assert exchange.gated.reply == Chat.fixed(pipeline).answer("What's 2+2?").gated.reply


def test_a_turn_waits_for_a_loading_model_and_shows_progress(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    assistant, local = _assistant(scripted_model, search)
    statuses = iter([ModelStatus(ModelState.LOADING, "halfway"), ModelStatus(ModelState.READY)])
    local.status = ModelStatus(ModelState.LOADING, "starting")
    local.wait_ready = lambda timeout=None: next(statuses)  # type: ignore[method-assign]
    seen: list[ModelState] = []
    assistant.chat.answer(
        "hi", options=TurnOptions(capture=False), on_wait=lambda s: seen.append(s.state)
    )
    assert seen == [ModelState.LOADING, ModelState.LOADING, ModelState.READY]


@pytest.mark.parametrize("history", [(), ("one",)])
def test_an_exchange_record_lists_its_turns(history: tuple[str, ...], search: ListSearch) -> None:
    pipeline = Pipeline(gate=never_gate(), store=search, responder=OfflineResponder())  # type: ignore[arg-type]
    chat = Chat.fixed(pipeline)
    past: list[Exchange] = [chat.answer(m) for m in history]
    exchange = chat.answer("What's 2+2?", past, TurnOptions(compare=True))
    assert exchange.turns == (exchange.gated, exchange.always)


# ---- a re-run after the user corrected a skip (issue 23) ------------------------------

WRONG_SKIP = "Where do I play basketball?"
BASKETBALL = "I play pickup basketball at Mission Playground on Sunday afternoons."


@dataclass
class _Correction:
    """The parts of memory.corrections.Correction a re-run reads (no Chroma here)."""

    id: str
    message: str
    retrieve: bool
    gate: str = ""


@dataclass
class _Book:
    """A CorrectionBook that only records: what Chat.correct writes to."""

    user_id: str = "me"
    added: list[_Correction] = field(default_factory=list)

    def add(self, message: str, retrieve: bool, *, gate: str = "", reason: str = "") -> Any:
        self.added.append(_Correction(f"c{len(self.added)}", message, retrieve, gate))
        return self.added[-1]


@dataclass
class _SkippingGate:
    """A judging gate that skips everything and counts how often it was asked."""

    name: str = "local"
    asked: list[str] = field(default_factory=list)

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        self.asked.append(message)
        return GateDecision(False, "", "general question", Method.LOCAL, gate=self.name)


def _correcting_chat(model: ScriptedModel, search: ListSearch) -> tuple[Chat, _SkippingGate]:
    gate = _SkippingGate()
    search.remember(BASKETBALL)
    pipeline = Pipeline(
        gate=gate,  # type: ignore[arg-type]
        store=search,  # type: ignore[arg-type]
        responder=ModelResponder(model, "chat"),
        capturer=Capturer(search, model, "gate"),  # type: ignore[arg-type]
    )
    wiring = Wiring(pipeline=pipeline, corrections=_Book())  # type: ignore[arg-type]
    return Chat(lambda: wiring), gate


def test_a_forced_decision_never_asks_the_gate(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script([])
    chat, gate = _correcting_chat(scripted_model, search)
    first = chat.answer(WRONG_SKIP)
    assert not first.gated.decision.retrieve and gate.asked == [WRONG_SKIP]
    rerun = chat.correct(first.gated)
    assert rerun is not None and rerun.corrects == first.gated.id
    assert rerun.decision.retrieve and rerun.decision.method is Method.CORRECTION
    scripted_model.calls.clear()
    again = chat.answer(rerun, [first])
    assert gate.asked == [WRONG_SKIP]  # the user decided: the gate was not asked again
    assert again.message == WRONG_SKIP and again.gated.decision is rerun.decision
    assert any(m.text == BASKETBALL for m in again.gated.memories)
    assert again.gated.capture is None and not scripted_model.prompts(
        CAPTURE
    )  # captured the first time


def test_correcting_a_retrieve_asks_for_no_rerun(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    chat = Chat.fixed(Pipeline(gate=always_gate(), store=search, responder=OfflineResponder()))  # type: ignore[arg-type]
    retrieved = Turn(WRONG_SKIP, GateDecision(True, "x", "personal", Method.LOCAL, gate="local"))
    with pytest.raises(ValueError, match="no corrections"):
        chat.correct(retrieved)  # a fixed chat keeps none
    chat, _ = _correcting_chat(scripted_model, search)
    assert chat.correct(retrieved) is None


def test_a_rerun_leaves_the_corrected_answer_out_of_the_history(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script([])
    chat, _ = _correcting_chat(scripted_model, search)
    earlier = chat.answer("What's 2+2?", options=TurnOptions(capture=False))
    wrong = chat.answer(WRONG_SKIP, [earlier], TurnOptions(capture=False))
    rerun = chat.correct(wrong.gated)
    assert rerun is not None
    scripted_model.calls.clear()
    chat.answer(rerun, [earlier, wrong])
    (reply,) = [c for c in scripted_model.calls if GATE not in prompt_of(c)]
    users = [prompt_of({"messages": [m]}) for m in reply["messages"] if m["role"] == "user"]
    # The earlier exchange and the re-run's own message: the wrong answer is not shown again.
    assert len(users) == 2 and "2+2" in users[0] and WRONG_SKIP in users[1]
    assert sum(m["role"] == "assistant" for m in reply["messages"]) == 1


def test_a_rerun_in_compare_mode_forces_only_the_gated_twin(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    scripted_model.script = _script([])
    chat, gate = _correcting_chat(scripted_model, search)
    both = TurnOptions(compare=True, capture=False)
    first = chat.answer(WRONG_SKIP, options=both)
    rerun = chat.correct(first.gated)
    assert rerun is not None
    again = chat.answer(rerun, [first], both)
    assert again.always is not None and gate.asked == [WRONG_SKIP]
    assert again.gated.variant is Variant.GATED and again.gated.decision is rerun.decision
    assert again.always.variant is Variant.ALWAYS and again.always.decision.method is Method.RULE


def test_the_shelf_wraps_judging_gates_and_not_rules(scripted_model: ScriptedModel) -> None:
    from assistant.gates.corrections.gate import CorrectedGate

    book = _Book()
    gates = GateShelf.for_settings(Settings(), scripted_model, corrections=book)  # type: ignore[arg-type]
    llm = gates.get("llm")
    assert isinstance(llm, CorrectedGate) and llm.book is book and llm.name == "llm"
    for rule in ("always", "never", "length"):
        assert not isinstance(gates.get(rule), CorrectedGate)
    plain = GateShelf.for_settings(Settings(), scripted_model)
    assert not isinstance(plain.get("llm"), CorrectedGate)


def test_the_offline_fallback_keeps_the_corrections(
    scripted_model: ScriptedModel, search: ListSearch
) -> None:
    from assistant.gates.corrections.gate import CorrectedGate

    book = _Book()
    settings = Settings(gate_mode="llm", base_url="http://127.0.0.1:1")
    gates = GateShelf.for_settings(settings, scripted_model, corrections=book)  # type: ignore[arg-type]
    pipeline = Pipeline(gate=gates.get("never"), store=search, responder=OfflineResponder())  # type: ignore[arg-type]
    local = _LocalModel()
    wiring = Wiring(pipeline=pipeline, client=scripted_model, gates=gates, corrections=book)  # type: ignore[arg-type]
    assistant = Assistant(settings, search, wiring, local)  # type: ignore[arg-type]
    assert isinstance(assistant.gate("llm"), CorrectedGate)
    local.fail()
    assert (assistant.prepare_turn() or "").startswith("Answering offline")
    after = assistant.wiring
    assert after.offline and after.corrections is book and assistant.corrections is book
    assert after.gates is not None and after.gates.built().keys() == {"never"}
