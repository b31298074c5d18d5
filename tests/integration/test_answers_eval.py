"""eval answers end to end: the CLI on a real temporary Chroma store, and on SmolLM2-135M.

The questions, the fake replies and the figures are the unit tests' own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assistant.runtime.fake_api import FakeAnthropicServer
from tests.models import HAVE_RUNTIME, SMALL
from tests.unit.test_answers_eval import (
    ALEX,
    FIGURES,
    MEETING,
    ROW_FIELDS,
    _chats,
    _reply,
    _user_text,
    _write,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.chroma  # the CLI loads the memories into a real temporary Chroma store
def test_cli_takes_conversations_a_temperature_and_repeats(
    fake_api: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from assistant.eval.__main__ import main

    fake_api.script = _reply
    memories = _write(tmp_path / "m.jsonl", [{"id": "a", "text": ALEX}])
    questions = _write(
        tmp_path / "q.jsonl",
        [
            {"turns": [MEETING, "What time?"], "answers": ["7:30pm"], "needs_memory": True},
            {"question": "What is 2 + 2?", "answers": ["4"], "needs_memory": False},
        ],
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    rows_path = tmp_path / "rows.jsonl"
    code = main(["answers", "--memories", str(memories), "--questions", str(questions),
                 "--modes", "never,always", "--temperature", "default", "--repeat", "2",
                 "--json", "--rows", str(rows_path)])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    result = json.loads(out.out)
    assert result["temperature"] == "default" and result["repeat"] == 2
    for figures in result["modes"].values():
        assert set(figures) >= FIGURES | {"note_leak_rate", "n_conversations"}
        assert figures["repeats"]["n"] == 2
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert len(rows) == 8  # 2 questions x 2 modes x 2 runs
    talks = [r for r in rows if r["question"] == "What time?"]
    assert all(r["turns"] == [MEETING, "What time?"] and len(r["earlier_replies"]) == 1
               for r in talks)  # fmt: skip
    assert all("temperature" not in r.body for r in fake_api.requests)
    assert "[4/4] run 2/2" in out.err


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
            {"turns": ["Tell me about my cat.", "What is it called?"], "answers": ["Pudding"],
             "needs_memory": True},
        ],
    )  # fmt: skip
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
        assert figures["n_memory"] == 2 and figures["n_general"] == 1
        assert figures["n_conversations"] == 1
    assert result["modes"]["never"]["memory_tokens"] == 0
    assert result["modes"]["always"]["memory_tokens"] > 0  # the cat memory went in

    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert len(rows) == 6  # 3 questions x 2 modes: a conversation's last turn only
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
    talk = by[("What is it called?", "always")]
    assert talk["turns"] == ["Tell me about my cat.", "What is it called?"]
    assert len(talk["earlier_replies"]) == 1 and talk["earlier_replies"][0]
    assert "[6/6]" in done.stderr  # progress goes to stderr, the JSON alone to stdout
    assert rows[0]["mode"] == "never"  # never runs first: its replies are world knowledge


# A three-turn chain runs the whole turn (the real store's embeddings): not a unit test.
def test_each_turn_of_a_longer_chain_gets_every_turn_before_it(
    fake_api: FakeAnthropicServer, sdk_client: Any
) -> None:
    from assistant.eval.answer_data import Question
    from assistant.eval.answer_run import run_repeats
    from assistant.eval.answer_score import MemoryTerms

    fake_api.script = _reply
    chain = Question("Where?", ("Nopa",), True, earlier=(MEETING, "What time?"))
    [row] = run_repeats(_chats(fake_api, sdk_client, ["always"]), [chain], MemoryTerms())
    sent = [[_user_text(m) for m in r.body["messages"]] for r in fake_api.requests]
    assert [len(messages) for messages in sent] == [1, 3, 5]
    assert MEETING in sent[2][0] and sent[2][1] == "Thursday at 7:30pm at Nopa."
    assert "What time?" in sent[2][2] and sent[2][3] == "At 7:30pm."
    assert row.turns == [MEETING, "What time?", "Where?"]
    assert row.earlier_replies == ["Thursday at 7:30pm at Nopa.", "At 7:30pm."]
