"""Fault injection through the fake Messages API: every fault, on the gate and on the chat."""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest

from assistant.gates.llm import LlmGate
from assistant.reply.capture import Capturer
from assistant.reply.respond import ModelResponder
from assistant.runtime.fake_api import Reply
from assistant.turn.chat import Chat
from assistant.turn.pipeline import Pipeline
from memory.store import MemoryStore

KEY = "sk-ant-FAULTS-0123456789-recognisable"
SKIP = '{"retrieve": false, "query": "", "reason": "small talk"}'
# The one call that is meant to time out gets a short timeout and a reply held back until
# the test ends, so it always times out; every other call gets a timeout no loaded
# machine reaches, so it never does.
SHORT_TIMEOUT = 0.5
TIMEOUT = 60.0
SLOW = "slower_than_timeout"

FAULTS = {
    "http_500": Reply(status=500),
    "http_529_overloaded": Reply(status=529),
    "http_429_retry_after": Reply(status=429, headers={"retry-after": "1"}),
    "http_401": Reply(status=401),
    SLOW: Reply(text=SKIP),  # held back by the test: see _held
    "broken_mid_reply": Reply(text="one two three four five six", break_after=1),
    "only_thinking": Reply(thinking="Let me think about this for a long while..."),
    "stop_max_tokens": Reply(text='{"retrieve": false, "query": "", "reason": "x"}'),
}
FAULTS["stop_max_tokens"].stop_reason = "max_tokens"
# The gate is not streamed, so its "broken mid-reply" is a body cut off mid-JSON.
GATE_BROKEN = Reply(raw_body=b'{"id": "msg_1", "type": "message", "content": [{"type": "te')


@pytest.fixture
def store(tmp_path):
    store = MemoryStore.persistent(tmp_path / "mem", "faults")
    store.add("Dinner with Alex on Thursday at 7:30pm at Nopa.", source="seeded")
    return store


def _pipeline(client, store, *, gate_timeout=TIMEOUT, chat_timeout=TIMEOUT):
    return Pipeline(
        gate=LlmGate(client, "gate", timeout=gate_timeout),
        store=store,
        responder=ModelResponder(client.with_options(timeout=chat_timeout), "chat"),
        capturer=Capturer(store, client, "gate", timeout=TIMEOUT),
    )


def _held(fault: str, held) -> Reply:
    """The fault's reply; the slow one is held back until the test is over."""
    reply = FAULTS[fault]
    return replace(reply, hold=held) if fault == SLOW else reply


@pytest.fixture
def client(fake_api):
    import anthropic

    return anthropic.Anthropic(api_key=KEY, base_url=fake_api.url, max_retries=0, timeout=TIMEOUT)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_gate_fault_fails_open_and_the_turn_completes(fake_api, client, store, fault, held):
    before = store.count()
    reply = GATE_BROKEN if fault == "broken_mid_reply" else _held(fault, held)
    fake_api.queue(reply, Reply(text="Thursday at 7:30pm."))
    pipeline = _pipeline(client, store, gate_timeout=SHORT_TIMEOUT if fault == SLOW else TIMEOUT)
    turn = pipeline.respond("when am I meeting Alex?")
    assert turn.decision.retrieve is True
    assert turn.decision.failed_open and turn.decision.label == "failed open"
    assert "failing open" in turn.decision.reason
    assert turn.memories and "Nopa" in turn.memories[0].text
    assert turn.reply == "Thursday at 7:30pm." and turn.error is None
    assert store.count() == before


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_chat_fault_reads_well_and_the_chat_goes_on(fake_api, client, store, fault, held):
    before = store.count()
    pipeline = _pipeline(client, store)
    fake_api.queue(Reply(text=SKIP), _held(fault, held))
    # Only the failing call has the short timeout; the pipeline holds no state between
    # turns, so the conversation goes on through the history it is given.
    chat_timeout = SHORT_TIMEOUT if fault == SLOW else TIMEOUT
    failed = _pipeline(client, store, chat_timeout=chat_timeout).respond("tell me a joke")
    assert failed.error, "a failed reply must say so"
    assert KEY not in failed.error and "Traceback" not in failed.error
    assert len(failed.error) < 200
    fake_api.queue(Reply(text=SKIP), Reply(text="Why did the chicken cross the road?"))
    ok = pipeline.respond("tell me another joke", [failed])
    assert ok.error is None and ok.reply.startswith("Why")
    assert store.count() == before


def test_connection_refused_everywhere(store):
    import anthropic

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = anthropic.Anthropic(api_key=KEY, base_url=f"http://127.0.0.1:{port}", max_retries=0)
    pipeline = _pipeline(client, store)
    turn = Chat.fixed(pipeline).answer("remember that my locker code is 4512").gated
    assert turn.decision.failed_open and "APIConnectionError" in turn.decision.reason
    assert turn.error and "could not reach" in turn.error and KEY not in turn.error
    # Capture fell back to the offline rules: the fact is not lost.
    assert turn.capture.saved == ("My locker code is 4512",)
    assert "locker code" in store.search("what is my locker code?")[0].text


def test_a_retried_turn_writes_no_duplicate_memory(fake_api, client, store):
    pipeline = _pipeline(client, store)
    message = "I'm seeing the dentist on March 3rd at 9am"
    facts = '{"facts": ["I\'m seeing the dentist on March 3rd at 9am."]}'
    fake_api.queue(Reply(text=SKIP), Reply(status=529), Reply(text=facts))
    chat = Chat.fixed(pipeline)
    exchange = chat.answer(message)
    first = exchange.gated
    assert first.error and first.capture.saved
    fake_api.queue(Reply(text=SKIP), Reply(text="Noted."), Reply(text=facts))
    retried = chat.answer(message, [exchange]).gated
    assert retried.error is None
    assert retried.capture.saved == () and retried.capture.known
    dentist = [m for m in store.list(limit=100) if "dentist" in m.text]
    assert len(dentist) == 1


def test_capture_model_fault_loses_nothing(fake_api, client, store):
    pipeline = _pipeline(client, store)
    # Capture retries once, so both attempts fail.
    fake_api.queue(Reply(text=SKIP), Reply(text="Noted."), Reply(status=500), Reply(status=500))
    turn = Chat.fixed(pipeline).answer("remember that Maya's flight lands at 6pm on Friday").gated
    assert turn.capture.error and "InternalServerError" in turn.capture.error
    assert turn.capture.saved == ("Maya's flight lands at 6pm on Friday",)


def test_capture_model_garbage_falls_back_to_rules(fake_api, client, store):
    pipeline = _pipeline(client, store)
    fake_api.queue(Reply(text=SKIP), Reply(text="Noted."), Reply(text="Sure! Facts: none"))
    turn = Chat.fixed(pipeline).answer("remember that the wifi password is hunter2").gated
    assert "no JSON" in turn.capture.error
    assert turn.capture.saved == ("The wifi password is hunter2",)


def test_a_broken_local_gate_fails_open_and_the_turn_completes(fake_api, client, store, tmp_path):
    # The offline default gate: if its weights are missing or corrupt, the turn still
    # retrieves (fails open) instead of ending in an exception.
    from assistant.gates.local import LocalGate

    (tmp_path / "corrupt.npz").write_bytes(b"not a weights file")
    for weights in (tmp_path / "missing.npz", tmp_path / "corrupt.npz"):
        pipeline = _pipeline(client, store)
        fake_api.queue(Reply(text="Thursday at 7:30pm."))
        turn = pipeline.respond("when am I meeting Alex?", gate=LocalGate(weights_path=weights))
        assert turn.decision.retrieve is True and turn.decision.failed_open
        assert turn.decision.gate == "local" and "failing open" in turn.decision.reason
        assert turn.memories and "Nopa" in turn.memories[0].text
        assert turn.reply == "Thursday at 7:30pm." and turn.error is None
