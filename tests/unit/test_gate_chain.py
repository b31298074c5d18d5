"""The one decision chain (registry.decide): corrections -> gate -> vocabulary -> conversation."""

from __future__ import annotations

from assistant.conversation.reading import read
from assistant.conversation.said import Said
from assistant.gates.base import GateDecision, Method
from assistant.gates.forced import Forced
from assistant.gates.registry import decide, with_corrections
from assistant.gates.rules import always_gate, never_gate

EARLIER = [Said("When am I meeting Alex?", "At 6.", query="meeting Alex")]
FOLLOW_UP = "What time?"


class Judge:
    """A judging gate that skips everything, or retrieves everything (named like the local
    gate)."""

    name = "local"

    def __init__(self, raises: bool = False, retrieves: bool = False) -> None:
        self.raises = raises
        self.retrieves = retrieves

    def warm(self) -> None:
        pass

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        if self.raises:
            raise RuntimeError("weights missing")
        if self.retrieves:
            return GateDecision(True, message, "may need memory", Method.LOCAL, gate=self.name)
        return GateDecision(False, "", "general question", Method.LOCAL, gate=self.name)


class Store:
    def __init__(self, known: list[str], raises: bool = False) -> None:
        self.known = known
        self.raises = raises

    def mentions(self, words: list[str]) -> list[str]:
        if self.raises:
            raise OSError("store gone")
        return [w for w in words if w in self.known]


def _follow_up() -> tuple:
    reading = read(FOLLOW_UP, EARLIER)
    assert reading.follow_up
    return EARLIER, reading


def test_a_judged_skip_of_a_follow_up_is_read_with_the_conversation() -> None:
    decision = decide(Judge(), FOLLOW_UP, *_follow_up())
    assert decision.retrieve and decision.method is Method.CONVERSATION
    assert "Alex" in decision.query and decision.query_source


def test_the_rule_modes_read_the_message_alone() -> None:
    decision = decide(never_gate(), FOLLOW_UP, *_follow_up())
    assert not decision.retrieve and decision.method is Method.RULE


def test_a_gate_that_raises_fails_open() -> None:
    decision = decide(Judge(raises=True), "What's my dentist's name?")
    assert decision.retrieve and decision.failed_open and decision.gate == "local"


def test_the_vocabulary_rule_runs_only_when_given_a_store() -> None:
    message = "What breed is Mango?"
    assert not decide(Judge(), message).retrieve
    turned = decide(Judge(), message, vocabulary=Store(["Mango"]))
    assert turned.retrieve and turned.method is Method.VOCABULARY
    # A store that cannot be read leaves the gate's own decision standing.
    assert not decide(Judge(), message, vocabulary=Store([], raises=True)).retrieve


def test_a_forced_decision_is_final_but_a_retrieve_takes_the_conversations_query() -> None:
    skip = GateDecision(False, "", "your correction", Method.CORRECTION, gate="local")
    assert decide(Forced(skip), FOLLOW_UP, *_follow_up(), vocabulary=Store(["What"])) is skip
    forced = GateDecision(True, FOLLOW_UP, "re-run", Method.CORRECTION, gate="local")
    decision = decide(Forced(forced), FOLLOW_UP, *_follow_up())
    assert decision.retrieve and "Alex" in decision.query and decision.query_source


def test_only_judging_gates_are_put_behind_corrections() -> None:
    from assistant.gates.corrections.gate import CorrectedGate

    book = object()  # never read: wrapping is decided by the gate's mode alone
    rule = always_gate()
    assert with_corrections(rule, book) is rule
    wrapped = with_corrections(Judge(), book)
    assert isinstance(wrapped, CorrectedGate) and wrapped.name == "local"
    assert with_corrections(wrapped, book) is wrapped
    judge = Judge()
    assert with_corrections(judge, None) is judge


class Reader(Judge):
    """A judging gate that keeps what it was asked and the conversation it was given."""

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        self.asked, self.given = message, conversation
        return super().decide(message)


def test_the_gate_gets_the_callers_one_reading_of_the_conversation() -> None:
    earlier = [Said("When's Declan's birthday?", "March 3.", query="Declan's birthday")]
    reading = read("And Mum's?", earlier)
    reader = Reader()
    decide(reader, "And Mum's?", earlier, reading)
    assert reader.given.meant == reading.query and "Declan" in reading.query
    assert [s.user for s in reader.given.said] == ["When's Declan's birthday?"]
    # A follow-up of a searched exchange: the gate is asked about the message itself.
    assert reader.asked == "And Mum's?"


GENERAL = [Said("What's the tallest mountain in Ireland?", "Carrauntoohil.")]


def test_a_follow_up_of_a_general_exchange_is_judged_as_it_reads_joined_to_it() -> None:
    reader = Reader()
    reading = read("and in the UK?", GENERAL)
    decision = decide(reader, "and in the UK?", GENERAL, reading)
    assert reader.asked == reading.query and "Ireland" in reader.asked
    assert not decision.retrieve  # the gate said general: nothing turns it over
    retrieving = decide(Judge(retrieves=True), "and in the UK?", GENERAL, reading)
    assert retrieving.retrieve and retrieving.query == reading.query


def test_a_follow_up_of_a_searched_exchange_searches_as_its_reading() -> None:
    decision = decide(Judge(), FOLLOW_UP, *_follow_up())
    assert decision.retrieve and decision.query == f"meeting Alex {FOLLOW_UP}"
    assert decision.query_source == "from your last message"


def test_a_message_that_does_not_lean_is_decided_on_its_own_words() -> None:
    reader = Reader()
    reading = read("Plan my weekend", EARLIER)
    decision = decide(reader, "Plan my weekend", EARLIER, reading)
    assert reader.asked == "Plan my weekend" and not decision.retrieve
    assert not decision.query_source


def test_a_model_that_read_the_conversation_keeps_its_own_standalone_query() -> None:
    class Model(Judge):
        reads_conversation = True

        def decide(self, message: str, conversation: object = None) -> GateDecision:
            return GateDecision(True, "Alex dinner time", "plans", Method.MODEL, gate="llm")

    decision = decide(Model(), FOLLOW_UP, *_follow_up())
    assert decision.query == "Alex dinner time" and decision.query_source


class Sure(Judge):
    """A local gate that skips with a given probability of retrieve."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        return GateDecision(False, "", "general", Method.LOCAL, gate="local", confidence=self.p)


def test_a_follow_up_that_asks_the_world_about_what_was_found_is_not_searched() -> None:
    earlier = [Said("what dates is the orlando trip", "April 5-12.", query="orlando trip")]
    asks = "what time zone is that city in?"
    reading = read(asks, earlier)
    assert reading.follow_up
    assert not decide(Sure(0.01), asks, earlier, reading).retrieve
    # Unsure, the gate leaves it to the conversation; and a bare one names nothing to ask.
    assert decide(Sure(0.2), asks, earlier, reading).retrieve
    assert decide(Sure(0.0), "what time?", earlier, read("what time?", earlier)).retrieve
