"""Which prompt the LLM gate sends: the seed's with a key, worked examples for a local model."""

from __future__ import annotations

from assistant.config import Settings
from assistant.fake_api import Reply
from assistant.gate import GATE_PROMPT, LOCAL_GATE_PROMPT, NO_JSON_REASON, LlmGate, Method
from assistant.gate_modes import build_gate

ALEX_JSON = '{"retrieve": true, "query": "meeting Alex", "reason": "user\'s plans"}'


def _sent(request) -> str:  # noqa: ANN001 - a fake_api Recorded
    (message,) = request.body["messages"]
    return message["content"]


def test_a_keyless_endpoint_gets_the_prompt_with_worked_examples(fake_api, sdk_client):
    fake_api.queue(Reply(text=ALEX_JSON))
    settings = Settings(api_key=None, base_url=fake_api.url, gate_model="local-gguf")
    decision = build_gate("llm", settings, sdk_client).decide("when am I meeting Alex?")
    assert (decision.retrieve, decision.query, decision.method) == (
        True,
        "meeting Alex",
        Method.MODEL,
    )
    sent = _sent(fake_api.requests[0])
    assert sent == LOCAL_GATE_PROMPT.format(message="when am I meeting Alex?")
    assert sent.rstrip().endswith("Message: when am I meeting Alex?")
    assert sent.count('{"retrieve": ') == 8  # the worked examples reach the model


def test_with_a_key_the_registry_sends_the_seed_prompt_unchanged(fake_api, sdk_client):
    fake_api.queue(Reply(text=ALEX_JSON))
    settings = Settings(api_key="sk-test", base_url=fake_api.url)
    build_gate("llm", settings, sdk_client).decide("when am I meeting Alex?")
    assert _sent(fake_api.requests[0]) == GATE_PROMPT.format(message="when am I meeting Alex?")


def test_the_cascade_on_a_local_model_asks_with_the_local_prompt(fake_api, sdk_client):
    settings = Settings(api_key=None, base_url=fake_api.url)
    cascade = build_gate("cascade", settings, sdk_client)
    fake_api.queue(Reply(text=ALEX_JSON))
    # The cascade's LLM is the registry's llm gate, so it gets the same prompt.
    assert cascade.llm.decide("did Sam like it?").retrieve is True
    assert _sent(fake_api.requests[0]) == LOCAL_GATE_PROMPT.format(message="did Sam like it?")


def test_a_custom_prompt_still_fails_open_on_prose(fake_api, sdk_client):
    fake_api.queue(Reply(text="Sure! This is about your plans with Alex."))
    gate = LlmGate(sdk_client, "m", prompt="Judge: {message}")
    decision = gate.decide("when am I meeting Alex?")
    assert decision.retrieve is True
    assert decision.method is Method.FAILED_OPEN
    assert decision.reason == NO_JSON_REASON
    assert _sent(fake_api.requests[0]) == "Judge: when am I meeting Alex?"


def test_the_local_prompt_keeps_a_message_with_braces_intact(fake_api, sdk_client):
    fake_api.queue(Reply(text='{"retrieve": false, "query": "", "reason": "code"}'))
    message = 'fix this: print({"a": 1}["a"])'
    settings = Settings(api_key=None, base_url=fake_api.url)
    decision = build_gate("llm", settings, sdk_client).decide(message)
    assert decision.retrieve is False
    assert _sent(fake_api.requests[0]).rstrip().endswith("Message: " + message)
