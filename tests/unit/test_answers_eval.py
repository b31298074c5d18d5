"""`python -m assistant.eval answers`: input checks, figures, and conversations on the fakes.

The end-to-end tests are in tests/integration/test_answers_eval.py: one runs SmolLM2-135M in
llama.cpp and checks the JSON's shape and the rows, not the model's answers (a 135M model
answers badly, which is not what that test is about).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from assistant.eval.answer_data import DataError, Question, balanced, read_locomo, read_questions
from assistant.eval.answer_report import Row, summarise
from assistant.eval.answer_score import MemoryTerms
from assistant.eval.answers import parse_modes, parse_temperature
from assistant.reply.hours import with_clock_times
from assistant.reply.respond import NOTHING_FOUND_NOTE
from assistant.runtime.fake_api import FakeAnthropicServer, Recorded, Reply
from tests.fakes import ListSearch

ROOT = Path(__file__).resolve().parents[2]
FIGURES = {
    "memory_accuracy",
    "general_accuracy",
    "leak_rate",
    "failed_open",
    "first_token_p50_general_ms",
    "first_token_p50_memory_ms",
    "memory_tokens",
    "n_memory",
    "n_general",
    "boilerplate_rate",
}
ROW_FIELDS = {
    "question",
    "mode",
    "retrieved",
    "memories",
    "reply",
    "correct",
    "leaked",
    "first_token_ms",
}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_modes_are_checked() -> None:
    assert parse_modes("never, always,local,always-no-cutoff,never") == [
        "never",
        "always",
        "local",
        "always-no-cutoff",
    ]
    with pytest.raises(DataError, match="sometimes"):
        parse_modes("never,sometimes")


def test_temperatures_are_numbers_or_the_endpoints_default() -> None:
    assert parse_temperature("default") is None  # the app's sampling: nothing sent
    assert parse_temperature("0") == 0.0 and parse_temperature("0.7") == 0.7
    for bad in ("-0.1", "hot", "nan"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_temperature(bad)


def test_questions_are_checked(tmp_path: Path) -> None:
    good = {"question": "What's 2+2?", "answers": ["4"], "needs_memory": False}
    assert read_questions(_write(tmp_path / "q.jsonl", [good]))[0].kind == "general"
    for bad, what in (
        ({**good, "answers": []}, "answers"),
        ({**good, "needs_memory": "no"}, "needs_memory"),
        ({**good, "match": "regex"}, "match"),
        ({"answers": ["4"], "needs_memory": False}, "question"),
        ({**good, "turns": ["Hi", "What's 2+2?"]}, "either"),  # both forms at once
        ({"turns": [], "answers": ["4"], "needs_memory": False}, "turns"),
        ({"turns": ["Hi", ""], "answers": ["4"], "needs_memory": False}, "turns"),
        ({"turns": "What's 2+2?", "answers": ["4"], "needs_memory": False}, "turns"),
    ):
        with pytest.raises(DataError, match=what):
            read_questions(_write(tmp_path / "bad.jsonl", [bad]))


def test_a_file_mixes_questions_and_conversations(tmp_path: Path) -> None:
    rows = [
        {"question": "What's 2+2?", "answers": ["4"], "needs_memory": False},
        {"turns": ["I need a gift idea for Mom.", "When's her birthday?"], "answers": ["9 May"],
         "needs_memory": True, "kind": "follow-up"},
    ]  # fmt: skip
    single, talk = read_questions(_write(tmp_path / "q.jsonl", rows))
    assert single.turns == ("What's 2+2?",) and single.earlier == ()
    # the scored question is the last turn; answers and needs_memory are about it
    assert talk.question == "When's her birthday?"
    assert talk.earlier == ("I need a gift idea for Mom.",)
    assert talk.turns == ("I need a gift idea for Mom.", "When's her birthday?")
    assert talk.answers == ("9 May",) and talk.needs_memory and talk.kind == "follow-up"


def test_a_limit_keeps_both_kinds() -> None:
    mem = [Question(f"m{i}", ("a",), True) for i in range(5)]
    gen = [Question(f"g{i}", ("a",), False) for i in range(2)]
    assert [q.question for q in balanced(mem + gen, 4)] == ["m0", "m1", "g0", "g1"]
    assert [q.question for q in balanced(mem + gen, 6)] == ["m0", "m1", "m2", "m3", "g0", "g1"]
    assert balanced(mem, 2) == mem[:2] and balanced(mem + gen, None) == mem + gen


def test_locomo_keeps_answerable_questions(tmp_path: Path) -> None:
    conv = {
        "conversation": {
            "sessions": [
                {
                    "date_time": "1:56 pm on 8 May, 2023",
                    "turns": [{"dia_id": "D1:1", "speaker": "Ann", "text": "I paint."}],
                }
            ],
            "qa": [
                {"question": "What does Ann do?", "answer": "paint", "category": 4},
                {"question": "Why?", "adversarial_answer": "x", "category": 5},
                {"question": "Does Ann paint?", "answer": "yes", "category": 4},
                {"question": "When?", "answer": "May", "category": 2},
            ],
        }
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(conv), encoding="utf-8")
    memories, questions = read_locomo(path)
    assert memories == [("D1:1", "Ann: I paint. (1:56 pm on 8 May, 2023)")]
    assert [q.question for q in questions] == ["What does Ann do?", "Does Ann paint?", "When?"]
    assert questions[0] == Question("What does Ann do?", ("paint",), True, "single-hop", category=4)
    # a limit takes the categories in turn, so a short run keeps their mix
    assert [q.question for q in read_locomo(path, 2)[1]] == ["When?", "What does Ann do?"]


def test_summary_figures() -> None:
    def row(mode: str, needs: bool, correct: bool, ms: float, **kw: object) -> Row:
        base = dict(
            question="q",
            mode=mode,
            needs_memory=needs,
            kind="k",
            retrieved=needs,
            failed_open=False,
            gate_reason="",
            memories=[],
            reply="",
            correct=correct,
            leaked=None if needs else False,
            first_token_ms=ms,
        )
        return Row(**{**base, **kw})  # type: ignore[arg-type]

    rows = [
        row("local", True, True, 900.0, memory_tokens=10),
        row("local", True, False, 700.0, failed_open=True),
        row("local", False, True, 300.0, leaked=True, boilerplate=["the user"]),
        row("local", False, False, 100.0),
        row("never", False, True, 200.0),
    ]
    figures = summarise(rows)
    local = figures["local"]
    assert local["memory_accuracy"] == 0.5 and local["general_accuracy"] == 0.5
    assert local["leak_rate"] == 0.5 and local["boilerplate_rate"] == 0.25
    assert local["failed_open"] == 1 and local["memory_tokens"] == 10
    # nearest-rank median: the lower of two
    assert local["first_token_p50_memory_ms"] == 700.0
    assert local["first_token_p50_general_ms"] == 100.0
    assert figures["never"]["memory_accuracy"] is None  # no memory questions: no figure


def test_the_reply_model_is_sent_temperature_0_only_when_asked(fake_api, sdk_client) -> None:
    from assistant.reply.respond import ModelResponder
    from assistant.runtime.fake_api import Reply

    fake_api.queue(Reply(text="4."), Reply(text="4."))
    greedy = ModelResponder(sdk_client, "m", temperature=0.0).reply("2+2?", [], [])
    default = ModelResponder(sdk_client, "m").reply("2+2?", [], [])
    assert greedy.error is None and default.error is None
    assert fake_api.requests[0].body["temperature"] == 0.0
    assert "temperature" not in fake_api.requests[1].body  # the app keeps the default


# ---- conversations, through the app's own Chat, against the fake Messages API ---------------

ALEX = "Dinner with Alex on Thursday at 7:30pm at Nopa"
MEETING = "When am I meeting Alex?"
TALKS = [
    Question("What time?", ("7:30pm",), True, "follow-up", earlier=(MEETING,)),
    # turn 1's reply names Nopa; the last reply does not: only the last turn is scored
    Question("Where?", ("Nopa",), True, "follow-up", earlier=(MEETING,)),
    Question("What is the capital of Australia?", ("Canberra",), False, earlier=(MEETING,)),
    Question("What is 2 + 2?", ("4",), False),  # single questions in the same set
    Question("What music do I like?", ("Radiohead",), True),  # nothing stored: the note
]


def _said(request: Recorded) -> str:
    """The user's own words in the request's newest message (after any memory block)."""
    return request.body["messages"][-1]["content"][-1]["text"]


def _reply(request: Recorded) -> Reply:
    """A model that answers from whatever its whole prompt holds, history included."""
    said, seen = _said(request), request.prompt_text
    if said == MEETING:
        return Reply(text="Thursday at 7:30pm at Nopa." if "Nopa" in seen else "I'm not sure.")
    if said == "What time?":
        return Reply(text="At 7:30pm." if "7:30pm" in seen else "I don't know the time.")
    if said == "Where?":
        return Reply(text="I don't know where.")
    if said == "What music do I like?":
        if NOTHING_FOUND_NOTE in _user_text(request.body["messages"][-1]):  # read back
            return Reply(text="I don't have any saved information about you for this message.")
        return Reply(text="I don't know what music you like yet.")
    if said.startswith("What is the capital"):
        return Reply(text="Canberra. Say hi to Alex at Nopa!" if "Nopa" in seen else "Canberra.")
    return Reply(text="4.")


def _chats(fake_api: FakeAnthropicServer, sdk_client: Any, modes: list[str], **kw: Any) -> dict:
    from assistant.config import Settings
    from assistant.eval.answers import ModelUnderTest, build_chats

    model = ModelUnderTest(Settings(base_url=fake_api.url), sdk_client, "fake", "127.0.0.1")
    store = ListSearch((ALEX, "My partner Jordan's birthday is on 12 March"))
    return build_chats(modes, model, store, k=3, max_tokens=64, **kw)


def _user_text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "\n".join(b["text"] for b in content)


def test_a_conversation_is_played_with_history_and_only_its_last_turn_scored(
    fake_api: FakeAnthropicServer, sdk_client: Any
) -> None:
    from assistant.eval.answer_run import run_repeats

    fake_api.script = _reply
    chats = _chats(fake_api, sdk_client, ["always", "never"])
    terms = MemoryTerms.of([ALEX], vocabulary=frozenset())
    rows = run_repeats(chats, TALKS, terms)

    # Each earlier turn was sent once per mode and no capture ran: 8 replies per mode.
    assert len(fake_api.requests) == 16
    assert len(rows) == 10  # one row per question and mode: the last turns only
    by = {(r.question, r.mode): r for r in rows}
    assert [r.mode for r in rows[:5]] == ["never"] * 5  # never first, each mode whole

    # The last turn's request carried the earlier turn and its reply as history.
    times = [r for r in fake_api.requests if _said(r) == "What time?"]
    assert len(times) == 2
    for request, mode in zip(times, ["never", "always"], strict=True):
        first, answer, last = request.body["messages"]
        assert first["role"] == "user" and MEETING in _user_text(first)
        assert answer["role"] == "assistant"
        assert _user_text(answer) == by[("What time?", mode)].earlier_replies[0]
        assert last["role"] == "user"
    # ... and in always mode, the memories that turn was sent come back with it
    assert with_clock_times(ALEX) in _user_text(times[1].body["messages"][0])
    # every conversation starts afresh: its first turn has no history
    assert all(len(r.body["messages"]) == 1 for r in fake_api.requests if _said(r) == MEETING)

    time_always = by[("What time?", "always")]
    assert time_always.correct and time_always.turns == [MEETING, "What time?"]
    assert time_always.earlier_replies == ["Thursday at 7:30pm at Nopa."]
    assert time_always.earlier_retrieved == [True]
    assert not by[("What time?", "never")].correct
    # "Nopa" was in turn 1's reply, not in the last one: wrong
    assert not by[("Where?", "always")].correct
    music = by[("What music do I like?", "always")]
    assert music.note_read_back == ["saved information", "for this message"]
    assert by[("What music do I like?", "never")].note_read_back == []  # an honest don't-know
    # a general follow-up: the user's own "Alex" is no leak, the memory's "Nopa" is
    capital = by[("What is the capital of Australia?", "always")]
    assert capital.correct and capital.leaked and capital.leak_terms == ["nopa"]
    assert by[("What is the capital of Australia?", "never")].leaked is False
    single = by[("What is 2 + 2?", "always")]
    assert single.turns == ["What is 2 + 2?"] and single.earlier_replies == []

    figures = summarise(rows)
    assert figures["always"]["memory_accuracy"] == 0.3333  # What time? right of 3
    assert figures["never"]["memory_accuracy"] == 0.0
    assert figures["always"]["general_accuracy"] == 1.0
    assert figures["always"]["leak_rate"] == 0.5 and figures["never"]["leak_rate"] == 0.0
    assert figures["always"]["note_leak_rate"] == 0.2  # 1 of 5 replies
    assert figures["never"]["note_leak_rate"] == 0.0
    assert figures["always"]["n_conversations"] == 3 and figures["always"]["n_memory"] == 3


def test_sampled_runs_are_repeated_and_their_spread_reported(
    fake_api: FakeAnthropicServer, sdk_client: Any
) -> None:
    from assistant.eval.answer_report import table
    from assistant.eval.answer_run import run_repeats

    answers = iter(["At 7:30pm.", "Around eight, I think."])  # run 1 right, run 2 wrong

    def sampled(request: Recorded) -> Reply:
        if _said(request) == "What time?":
            return Reply(text=next(answers))
        return _reply(request)

    fake_api.script = sampled
    chats = _chats(fake_api, sdk_client, ["always"], temperature=None)
    rows = run_repeats(chats, [TALKS[0], TALKS[3]], MemoryTerms(), repeat=2)

    assert [r.run for r in rows] == [1, 1, 2, 2]
    assert len(fake_api.requests) == 6  # the conversation's first turn played again in run 2
    # temperature None: nothing sent, so the endpoint samples as it does for the app
    assert all("temperature" not in r.body for r in fake_api.requests)
    always = summarise(rows)["always"]
    assert always["memory_accuracy"] == 0.5  # pooled: the mean of the runs
    spread = always["repeats"]
    assert spread["n"] == 2
    assert spread["memory_accuracy"] == {
        "mean": 0.5, "sd": 0.7071, "min": 0.0, "max": 1.0, "runs": [1.0, 0.0]
    }  # fmt: skip
    assert spread["general_accuracy"]["sd"] == 0.0
    shown = table(
        {"model": "m", "endpoint": "e", "temperature": "default", "modes": {"always": always}}
    )
    assert "over 2 runs: memory 0.50 sd 0.71 (0.00-1.00)" in shown


def test_a_numeric_temperature_reaches_the_reply_model(
    fake_api: FakeAnthropicServer, sdk_client: Any
) -> None:
    from assistant.eval.answer_run import run_repeats

    fake_api.script = _reply
    run_repeats(_chats(fake_api, sdk_client, ["never"], temperature=0.3), TALKS[:1], MemoryTerms())
    assert [r.body["temperature"] for r in fake_api.requests] == [0.3, 0.3]  # both turns
