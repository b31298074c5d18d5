"""The one decision chain (registry.decide): corrections -> gate -> vocabulary -> conversation."""

from __future__ import annotations

from assistant.followup import resolve
from assistant.gates.base import GateDecision, Method, Said
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
    resolved = resolve(FOLLOW_UP, EARLIER)
    assert resolved.follow_up
    return EARLIER, resolved, EARLIER[-1]


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
    """A judging gate that keeps the conversation it was given."""

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        self.given = conversation
        return super().decide(message)


def test_the_gate_gets_the_callers_one_reading_of_the_conversation() -> None:
    # "And Mum's?" is a follow-up only because the user's memories mention Mum: the store
    # is read once, by the caller, and the chain hands on that reading, not a fresh one.
    earlier = [Said("When's Declan's birthday?", "March 3.", query="Declan's birthday")]
    resolved = resolve("And Mum's?", earlier, Store(["Mum"]).mentions)
    assert resolved.query == "When's Mum's birthday?"
    assert not resolve("And Mum's?", earlier).follow_up  # without the store: a new question
    reader = Reader()
    decide(reader, "And Mum's?", earlier, resolved, earlier[-1])
    assert reader.given.meant == "When's Mum's birthday?"
    assert [s.user for s in reader.given.said] == ["When's Declan's birthday?"]


GENERAL = [Said("What's the tallest mountain in Ireland?", "Carrauntoohil.")]


def test_a_follow_up_of_a_general_question_is_general_unless_it_speaks_of_the_user() -> None:
    resolved = resolve("and in the UK?", GENERAL)
    assert resolved.follow_up
    # The local gate reads "and in the UK?" alone and retrieves: with its question, it is
    # as general as that question was.
    decision = decide(Judge(retrieves=True), "and in the UK?", GENERAL, resolved, GENERAL[-1])
    assert not decision.retrieve and decision.method is Method.CONVERSATION
    assert decision.reason == "continues a general question"
    joke = [Said("Tell me a joke", "Why did the scarecrow win an award?")]
    mine = "now one about my dog, use his name"
    kept = decide(Judge(retrieves=True), mine, joke, resolve(mine, joke), joke[-1])
    assert kept.retrieve and kept.method is Method.LOCAL
    # A name the user's memories mention is found by the vocabulary rule, next in the chain.
    named = "and one about Biscuit?"
    read = resolve(named, joke, lambda names: [n for n in names if n == "Biscuit"])
    assert read.follow_up
    found = decide(
        Judge(retrieves=True), named, joke, read, joke[-1], vocabulary=Store(["Biscuit"])
    )
    assert found.retrieve and found.method is Method.VOCABULARY


def test_a_follow_up_about_someone_of_the_users_after_a_general_aside_searches() -> None:
    party = [
        Said("My son wants a dinosaur party. Give me three dinosaur facts for kids.", "T-rex…")
    ]
    message = "great. when's his birthday again?"
    resolved = resolve(message, party)
    decision = decide(Judge(retrieves=True), message, party, resolved, party[-1])
    assert decision.retrieve and decision.query == "great. when's my son's birthday again?"
    # A general aside that names no one of the user's stays general.
    facts = [Said("Give me three dinosaur facts for kids.", "T-rex…")]
    chained = "when did they die out?"
    read = resolve(chained, facts)
    assert not decide(Judge(retrieves=True), chained, facts, read, facts[-1]).retrieve


def test_a_follow_up_about_someone_the_memories_know_after_a_general_aside_searches() -> None:
    known = ["tavita", "moss"]  # as the keyword index reads them, in lower case
    recipe = [Said("how do you make palusami", "Wrap taro leaves around coconut cream…")]
    message = "tavita wants that for his bday, when is it again?"
    read = resolve(message, recipe, lambda names: [n for n in names if n in known])
    decision = decide(
        Judge(retrieves=True), message, recipe, read, recipe[-1], vocabulary=Store(known)
    )
    assert decision.retrieve and "tavita's bday" in decision.query
    # Whom a question asks of, in lower case: "what does tavita like in his?" searches too.
    asks = "what does tavita like in his?"
    read = resolve(asks, recipe, lambda names: [n for n in names if n in known])
    decision = decide(
        Judge(retrieves=True), asks, recipe, read, recipe[-1], vocabulary=Store(known)
    )
    assert decision.retrieve and "tavita's" in decision.query
    booster = [Said("Moss is due his booster jab isn't he", "Yes, dogs need boosters yearly.")]
    read = resolve("what time?", booster)
    assert decide(Judge(retrieves=True), "what time?", booster, read, booster[-1],
                  vocabulary=Store(known)).retrieve  # fmt: skip
    # "and of New Zealand?" names no one: a general chain stays general.
    capital = [Said("What's the capital of Australia?", "Canberra.")]
    read = resolve("and of New Zealand?", capital, lambda names: names)
    assert not decide(Judge(retrieves=True), "and of New Zealand?", capital, read, capital[-1],
                      vocabulary=Store(["New"])).retrieve  # fmt: skip


def test_a_follow_up_of_a_missed_memory_question_still_searches() -> None:
    # The gate skipped "where's the FCC testing", but the user's memories mention the FCC:
    # the question was about their life, and so is "when?".
    missed = [Said("where's the FCC testing", "The FCC tests devices in labs.")]
    resolved = resolve("when?", missed)
    decision = decide(
        Judge(retrieves=True), "when?", missed, resolved, missed[-1], vocabulary=Store(["FCC"])
    )
    assert decision.retrieve and "FCC" in decision.query
    assert not decide(
        Judge(retrieves=True), "when?", missed, resolved, missed[-1], vocabulary=Store([])
    ).retrieve


def test_a_bare_follow_up_of_a_statement_the_memories_speak_of_searches() -> None:
    # The gate read "eye screening is coming up soon" alone as general (p=0.01): no name
    # in it, yet a note holds the screening's time, and "what time?" asks only for it.
    soon = [Said("eye screening is coming up soon", "Good luck with it!")]
    resolved = resolve("what time?", soon)
    gate, known = Judge(retrieves=True), Store(["screening"])
    decision = decide(gate, "what time?", soon, resolved, soon[-1], vocabulary=known)
    assert decision.retrieve and "screening" in decision.query
    # A "who …?" of the world stays general, though a note says "allergic to penicillin".
    asked = [Said("who discovered penicillin", "Alexander Fleming, in 1928.")]
    resolved = resolve("in what year?", asked)
    assert not decide(
        Judge(retrieves=True), "in what year?", asked, resolved, asked[-1],
        vocabulary=Store(["penicillin"]),
    ).retrieve  # fmt: skip


def test_a_question_after_a_remark_the_memories_speak_of_searches() -> None:
    # The gate skipped the remark, which asks nothing; "code?" names a word of its own, so
    # it is no bare follow-up, yet it asks the code of the storeroom a note speaks of.
    locked = [Said("storeroom at tower 3 is locked again", "That's annoying!")]
    resolved = resolve("code?", locked)
    gate = Judge(retrieves=True)
    decision = decide(gate, "code?", locked, resolved, locked[-1], vocabulary=Store(["storeroom"]))
    assert decision.retrieve and "storeroom" in decision.query
    assert not decide(
        gate, "code?", locked, resolved, locked[-1], vocabulary=Store([])
    ).retrieve  # fmt: skip
    # A request is no remark: a joke about the storeroom is the world's, and so is the next.
    joke = [Said("tell me a joke about a storeroom", "Why did the shelf…")]
    resolved = resolve("another one?", joke)
    assert not decide(
        gate, "another one?", joke, resolved, joke[-1], vocabulary=Store(["storeroom"])
    ).retrieve  # fmt: skip


def test_a_place_the_memories_mention_makes_no_general_chain_personal() -> None:
    # The user lives in Scotland, so their memories mention it; "and of Wales?" still asks
    # the world's question, and names a place of its own that they don't mention.
    asked = [Said("What's the capital of Scotland?", "Edinburgh.")]
    resolved = resolve("and of Wales?", asked)
    home = Store(["Scotland"])
    decision = decide(Judge(retrieves=True), "and of Wales?", asked, resolved, asked[-1],
                      vocabulary=home)  # fmt: skip
    assert not decision.retrieve and decision.reason == "continues a general question"
    # A follow-up that names what the memories know still searches ("and Mum's?").
    known = Store(["Scotland", "Oban"])
    oban = resolve("and Oban?", asked, known.mentions)
    assert decide(Judge(retrieves=True), "and Oban?", asked, oban, asked[-1],
                  vocabulary=known).retrieve  # fmt: skip


def test_a_word_said_with_the_is_no_sign_a_general_question_was_about_the_user() -> None:
    # A memory may say "biggest"; "what's the biggest dairy state in the US" is still the
    # world's question, and so is "and number two?".
    asked = [Said("what's the biggest dairy state in the US", "California.")]
    resolved = resolve("and number two?", asked)
    decision = decide(
        Judge(retrieves=True), "and number two?", asked, resolved, asked[-1],
        vocabulary=Store(["biggest"]),
    )  # fmt: skip
    assert not decision.retrieve
    # Nor is "US": the store's keyword index reads it as "us", which memories say.
    us = decide(
        Judge(retrieves=True), "and number two?", asked, resolved, asked[-1],
        vocabulary=Store(["US", "biggest"]),
    )  # fmt: skip
    assert not us.retrieve


class Cascade(Judge):
    """A gate whose model reads the conversation, deciding by `method` (cascade-like)."""

    name = "cascade"
    reads_conversation = True

    def __init__(self, method: Method) -> None:
        super().__init__(retrieves=True)
        self.method = method

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        return GateDecision(True, message, "may need memory", self.method, gate=self.name)


def test_only_a_model_that_read_the_conversation_keeps_a_general_follow_ups_retrieve() -> None:
    # Cascade on the built-in model decides as the local gate: the same rule holds.
    resolved = resolve("and in the UK?", GENERAL)
    local = decide(Cascade(Method.LOCAL), "and in the UK?", GENERAL, resolved, GENERAL[-1])
    assert not local.retrieve and local.reason == "continues a general question"
    model = decide(Cascade(Method.MODEL), "and in the UK?", GENERAL, resolved, GENERAL[-1])
    assert model.retrieve and model.method is Method.MODEL


class Unsure(Judge):
    """A judging gate that retrieves with the probability it was given."""

    def __init__(self, p: float) -> None:
        super().__init__(retrieves=True)
        self.p = p

    def decide(self, message: str, conversation: object = None) -> GateDecision:
        return GateDecision(True, message, "may need memory", Method.LOCAL, gate=self.name,
                            confidence=self.p)  # fmt: skip


LAYOVER = [Said("what are my bkk layover dates", "16-18 Nov in Bangkok.", query="bkk layover")]


def test_a_question_of_the_world_about_what_was_just_found_is_not_searched() -> None:
    # Searched with the layover, the notes beside Bangkok made the reply "the Indian rupee".
    message = "what currency do they use there?"
    resolved = resolve(message, LAYOVER)
    assert resolved.follow_up
    skipped = decide(Judge(), message, LAYOVER, resolved, LAYOVER[-1])
    assert not skipped.retrieve and skipped.reason == "asks a fact of the world about it"
    # The clause that asks is what counts: the user speaking of themselves before it does not.
    for asked in ("i should learn a few words, what language do they speak there?",
                  "what's another name for it in english?",
                  "what time zone is that city in?"):  # fmt: skip
        assert not decide(Judge(), asked, LAYOVER, resolve(asked, LAYOVER), LAYOVER[-1]).retrieve
    # A retrieve the gate was unsure of goes the same way; a sure one stands.
    assert not decide(Unsure(0.18), message, LAYOVER, resolved, LAYOVER[-1]).retrieve
    assert decide(Unsure(0.9), message, LAYOVER, resolved, LAYOVER[-1]).retrieve


def test_a_question_of_the_world_about_the_user_or_a_person_still_searches() -> None:
    wife = [Said("who is Kenji's wife?", "Aiko.", query="Kenji's wife")]
    message = "what country is she from?"
    decision = decide(Judge(), message, wife, resolve(message, wife), wife[-1])
    assert decision.retrieve and decision.reason == "follows up on your memories"
    mine = "what currency do I need to bring there?"
    assert decide(Judge(), mine, LAYOVER, resolve(mine, LAYOVER), LAYOVER[-1]).retrieve
    # Nor does a question of the user's own facts: "what time?" asks the notes.
    assert decide(Judge(), "what time?", LAYOVER, resolve("what time?", LAYOVER),
                  LAYOVER[-1]).retrieve  # fmt: skip
