"""eval gate with the local gate, which embeds with the ONNX model."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_gate_eval import ROWS, run, write


@pytest.mark.chroma  # the local gate embeds with the ONNX model
def test_local_gate_scores_the_file(tmp_path, capsys):
    assert run([str(write(tmp_path, ROWS)), "--gate", "local", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 4 and result["accuracy"] == 1.0
    assert 0 < result["p50_ms"] <= result["p95_ms"]


# Messages the local gate is unsure about (P(retrieve) inside the cascade's band with the
# shipped weights): the cascade must hand these to the LLM.
UNSURE = [
    "what do you think about that?",
    "what time is it there?",
    "is it going to rain?",
    "tell me more about her",
]


@pytest.mark.chroma  # the cascade's local gate embeds with ONNX
def test_cascade_asks_the_llm_about_unsure_messages_only(tmp_path, capsys, fake_api, monkeypatch):
    from assistant.runtime.fake_api import Reply

    fake_api.script = lambda _req: Reply(
        text='{"retrieve": false, "query": "", "reason": "the fake LLM says no"}'
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    rows = ROWS + [{"message": m, "retrieve": False, "source": "unsure"} for m in UNSURE]
    assert run([str(write(tmp_path, rows)), "--gate", "cascade", "--by", "source", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    asked = [r.prompt_text for r in fake_api.requests]
    assert result["llm_calls"] >= 1, "no message was unsure: UNSURE needs new examples"
    assert result["llm_calls"] == len(asked)  # each one a real request over HTTP
    # Only unsure messages went to the LLM, and its "no" is what the cascade decided.
    assert all(any(m in prompt for m in UNSURE) for prompt in asked)
    assert result["by_source"]["unsure"]["skip_rate"] >= result["llm_calls"] / len(UNSURE)
    assert result["by_source"]["math"]["skip_rate"] == 1.0
    assert result["by_source"]["mine"]["recall"] == 1.0  # sure cases never wait on a model
