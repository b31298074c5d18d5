"""Which prompt the LLM gate sends: the seed's with a key, worked examples for a local model."""

from __future__ import annotations

from assistant.config import Settings
from assistant.gates.base import Method
from assistant.gates.llm import GATE_PROMPT, LOCAL_GATE_PROMPT, NO_JSON_REASON, LlmGate
from assistant.gates.registry import build_gate

ALEX_JSON = '{"retrieve": true, "query": "meeting Alex", "reason": "user\'s plans"}'


# A keyless endpoint, as a local llama.cpp server is; the scripted model answers in its place.
ENDPOINT = "http://127.0.0.1:8080"


def _sent(call: dict) -> str:
    """The one user message of a recorded request."""
    (message,) = call["messages"]
    return message["content"]


def test_a_keyless_endpoint_gets_the_prompt_with_worked_examples(scripted_model):
    scripted_model.queue(ALEX_JSON)
    settings = Settings(api_key=None, base_url=ENDPOINT, gate_model="local-gguf")
    decision = build_gate("llm", settings, scripted_model).decide("when am I meeting Alex?")
    assert (decision.retrieve, decision.query, decision.method) == (
        True,
        "meeting Alex",
        Method.MODEL,
    )
    sent = _sent(scripted_model.calls[0])
    assert sent == LOCAL_GATE_PROMPT.format(message="when am I meeting Alex?")
    assert sent.rstrip().endswith("Message: when am I meeting Alex?")
    assert sent.count('{"retrieve": ') == 8  # the worked examples reach the model


def test_with_a_key_the_registry_sends_the_seed_prompt_unchanged(scripted_model):
    scripted_model.queue(ALEX_JSON)
    settings = Settings(api_key="sk-test", base_url=ENDPOINT)
    build_gate("llm", settings, scripted_model).decide("when am I meeting Alex?")
    assert _sent(scripted_model.calls[0]) == GATE_PROMPT.format(message="when am I meeting Alex?")


def test_the_cascade_on_a_local_model_asks_with_the_local_prompt(scripted_model):
    settings = Settings(api_key=None, base_url=ENDPOINT)
    cascade = build_gate("cascade", settings, scripted_model)
    scripted_model.queue(ALEX_JSON)
    # The cascade's LLM is the registry's llm gate, so it gets the same prompt.
    assert cascade.llm.decide("did Sam like it?").retrieve is True
    assert _sent(scripted_model.calls[0]) == LOCAL_GATE_PROMPT.format(message="did Sam like it?")


def test_a_custom_prompt_still_fails_open_on_prose(scripted_model):
    scripted_model.queue("Sure! This is about your plans with Alex.")
    gate = LlmGate(scripted_model, "m", prompt="Judge: {message}")
    decision = gate.decide("when am I meeting Alex?")
    assert decision.retrieve is True
    assert decision.method is Method.FAILED_OPEN
    assert decision.reason == NO_JSON_REASON
    assert _sent(scripted_model.calls[0]) == "Judge: when am I meeting Alex?"


def test_the_local_prompt_keeps_a_message_with_braces_intact(scripted_model):
    scripted_model.queue('{"retrieve": false, "query": "", "reason": "code"}')
    message = 'fix this: print({"a": 1}["a"])'
    settings = Settings(api_key=None, base_url=ENDPOINT)
    decision = build_gate("llm", settings, scripted_model).decide(message)
    assert decision.retrieve is False
    assert _sent(scripted_model.calls[0]).rstrip().endswith("Message: " + message)
