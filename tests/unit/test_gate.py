"""The seed gate and its GateDecision record.

Reading a reply runs on the scripted model; what depends on the wire (status codes, retries,
timeouts, thinking blocks, stop reasons, token counts) goes through the real SDK and the fake
server.
"""

from __future__ import annotations

import pytest

from assistant.gates.base import MAX_GATE_MESSAGE_CHARS, Method
from assistant.gates.llm import (
    GATE_MAX_TOKENS,
    GATE_PROMPT,
    NO_JSON_REASON,
    GateReplyError,
    LlmGate,
    parse_gate_reply,
    should_retrieve,
)
from assistant.gates.rules import always_gate, length_gate, never_gate
from assistant.runtime.fake_api import Reply

SKIP_JSON = '{"retrieve": false, "query": "", "reason": "general math"}'
ALEX_JSON = '{"retrieve": true, "query": "meeting Alex", "reason": "user\'s plans"}'


# --- the seed contract: should_retrieve(client, small_model, message) ---------------------


def test_seed_sends_the_prompt_with_600_max_tokens(fake_api, sdk_client):
    fake_api.queue(Reply(text=ALEX_JSON))
    assert should_retrieve(sdk_client, "small-model", "when am I meeting Alex?") == (
        True,
        "meeting Alex",
        "user's plans",
    )
    (request,) = fake_api.requests
    assert request.path == "/v1/messages"
    assert request.body["model"] == "small-model"
    assert request.body["max_tokens"] == GATE_MAX_TOKENS == 600
    assert request.body["messages"] == [
        {"role": "user", "content": GATE_PROMPT.format(message="when am I meeting Alex?")}
    ]
    assert "ONLY a JSON object" in GATE_PROMPT


def test_seed_skips_when_the_model_says_false(scripted_model):
    scripted_model.queue(SKIP_JSON)
    retrieve, query, reason = should_retrieve(scripted_model, "m", "what's 2+2?")
    assert (retrieve, reason) == (False, "general math")
    assert query == "what's 2+2?"  # empty query falls back to the message


def test_seed_reads_only_text_blocks(fake_api, sdk_client):
    # The thinking block holds JSON that would flip the answer if it were read.
    fake_api.queue(Reply(thinking='{"retrieve": false}', text=ALEX_JSON))
    assert should_retrieve(sdk_client, "m", "when am I meeting Alex?")[0] is True


def test_seed_fails_open_without_json(scripted_model):
    scripted_model.queue("I think you should look it up.")
    assert should_retrieve(scripted_model, "m", "hello") == (True, "hello", NO_JSON_REASON)
    assert NO_JSON_REASON == "gate returned no JSON — failing open"


def test_seed_takes_json_from_first_to_last_brace(scripted_model):
    text = 'Sure! {"retrieve": true, "query": "plans {weekend}", "reason": "r"} Hope it helps.'
    scripted_model.queue(text)
    assert should_retrieve(scripted_model, "m", "x") == (True, "plans {weekend}", "r")


@pytest.mark.parametrize(
    ("reply", "exc_name"),
    [
        (Reply(status=500), "InternalServerError"),
        (Reply(status=529), "OverloadedError"),
        (Reply(status=401), "AuthenticationError"),
        (Reply(raw_body=b"<html>502 bad gateway</html>"), "JSONDecodeError"),
        (Reply(text='{"retrieve": tru'), "JSONDecodeError"),
    ],
)
def test_seed_fails_open_on_any_error_with_its_type(fake_api, sdk_client, reply, exc_name):
    fake_api.queue(reply)
    retrieve, query, reason = should_retrieve(sdk_client.with_options(max_retries=0), "m", "hi")
    assert retrieve is True
    assert query == "hi"
    assert exc_name in reason and "failing open" in reason


def test_seed_fails_open_when_no_key_is_set(fake_api):
    # With no key the SDK raises TypeError at request time: still a retrieve, not a crash.
    import anthropic

    keyless = anthropic.Anthropic(api_key=None, base_url=fake_api.url, max_retries=0)
    retrieve, _query, reason = should_retrieve(keyless, "m", "when am I meeting Alex?")
    assert retrieve is True
    assert "failing open" in reason


# --- the richer LlmGate / GateDecision ----------------------------------------------------


def test_decision_records_method_tokens_and_time(fake_api, sdk_client):
    ticks = iter([10.0, 10.25])
    gate = LlmGate(sdk_client, "m", clock=lambda: next(ticks))
    fake_api.queue(Reply(text=ALEX_JSON, input_tokens=123, output_tokens=17))
    decision = gate.decide("when am I meeting Alex?")
    assert decision.retrieve is True
    assert decision.method is Method.MODEL
    assert decision.label == "retrieved"
    assert decision.elapsed_ms == pytest.approx(250.0)
    assert (decision.input_tokens, decision.output_tokens) == (123, 17)
    assert decision.gate == "llm"
    assert not decision.truncated


def test_string_false_reads_as_false(scripted_model):
    scripted_model.queue('{"retrieve": "false", "query": "", "reason": "small talk"}')
    decision = LlmGate(scripted_model, "m").decide("how are you?")
    assert decision.retrieve is False
    assert decision.label == "skipped"


def test_json_in_code_fences_parses(scripted_model):
    scripted_model.queue(f"```json\n{ALEX_JSON}\n```")
    decision = LlmGate(scripted_model, "m").decide("when am I meeting Alex?")
    assert (decision.retrieve, decision.query, decision.method) == (
        True,
        "meeting Alex",
        Method.MODEL,
    )


def test_reply_cut_off_at_max_tokens_fails_open(fake_api, sdk_client):
    # Even a complete-looking "false" is distrusted when the reply was cut off.
    fake_api.queue(Reply(text=SKIP_JSON, stop_reason="max_tokens"))
    decision = LlmGate(sdk_client, "m").decide("what's 2+2?")
    assert decision.retrieve is True
    assert decision.method is Method.FAILED_OPEN
    assert decision.label == "failed open"
    assert "cut off" in decision.reason


def test_slow_reply_times_out_and_fails_open(fake_api, sdk_client, held):
    fake_api.queue(Reply(text=SKIP_JSON, hold=held))
    decision = LlmGate(sdk_client, "m", timeout=0.3).decide("what's 2+2?")
    assert decision.retrieve is True
    assert decision.failed_open
    assert "timed out" in decision.reason


def test_gate_does_not_retry_by_default(fake_api, sdk_client):
    # On stage a fast fail-open beats three slow attempts.
    fake_api.queue(Reply(status=529), Reply(status=529), Reply(text=SKIP_JSON))
    decision = LlmGate(sdk_client.with_options(max_retries=2), "m").decide("2+2")
    assert decision.failed_open
    assert len(fake_api.requests) == 1


@pytest.mark.parametrize("message", ["", "   ", "\n\t "])
def test_empty_message_skips_without_calling_the_model(scripted_model, message):
    decision = LlmGate(scripted_model, "m").decide(message)
    assert (decision.retrieve, decision.reason, decision.method) == (
        False,
        "empty message",
        Method.EMPTY_INPUT,
    )
    assert scripted_model.calls == []


def test_huge_message_is_cut_before_the_prompt(scripted_model):
    scripted_model.queue(ALEX_JSON)
    message = "Remember my trip to Lisbon. " * 4000  # ~112,000 characters
    decision = LlmGate(scripted_model, "m").decide(message)
    assert decision.truncated is True
    assert decision.retrieve is True and not decision.failed_open
    sent = scripted_model.calls[0]["messages"][0]["content"]
    assert len(sent) <= len(GATE_PROMPT) + MAX_GATE_MESSAGE_CHARS
    assert message[:MAX_GATE_MESSAGE_CHARS] in sent


def test_failed_open_query_is_the_bounded_message(fake_api, sdk_client):
    fake_api.queue(Reply(status=500))
    decision = LlmGate(sdk_client, "m").decide("x" * 50_000)
    assert decision.failed_open
    assert len(decision.query) == MAX_GATE_MESSAGE_CHARS


# --- parsing, without a server -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"retrieve": true, "query": "q", "reason": "r"}', (True, "q", "r")),
        ('{"retrieve": false, "query": "", "reason": ""}', (False, "msg", "no memory needed")),
        ('{"retrieve": "yes", "query": "  q  ", "reason": "r"}', (True, "q", "r")),
        ('{"retrieve": "False", "query": null, "reason": "r"}', (False, "msg", "r")),
        ('{"retrieve": 0}', (False, "msg", "no memory needed")),
    ],
)
def test_parse_gate_reply_reads_values(text, expected):
    assert parse_gate_reply(text, "msg") == expected


@pytest.mark.parametrize(
    "text",
    ["no json here", "[1, 2]", '{"query": "q"}', '{"retrieve": "maybe"}', "{not json}"],
)
def test_parse_gate_reply_rejects_what_it_cannot_read(text):
    with pytest.raises(GateReplyError):
        parse_gate_reply(text, "msg")


# --- baselines ------------------------------------------------------------------------------


def test_baseline_gates():
    assert always_gate().decide("2+2").retrieve is True
    assert never_gate().decide("when am I meeting Alex?").retrieve is False
    length = length_gate()
    assert length.decide("when am I meeting Alex?").retrieve is False  # 23 chars
    assert length.decide("what did my sister say about the trip?").retrieve is True
    for gate in (always_gate(), never_gate(), length):
        assert gate.decide("  ").method is Method.EMPTY_INPUT
