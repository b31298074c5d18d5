"""Model errors: one classification, by class, read by every caller."""

from __future__ import annotations

from assistant.runtime.completion import ModelError, classify_error, describe_error


def test_errors_are_classified_by_their_class_not_their_name() -> None:
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    assert classify_error(anthropic.APITimeoutError(request=request)) is ModelError.TIMEOUT
    assert classify_error(anthropic.APIConnectionError(request=request)) is ModelError.UNREACHABLE
    assert classify_error(httpx2.RemoteProtocolError("peer closed")) is ModelError.DROPPED

    class APITimeoutError(Exception):
        """Only named like the SDK's."""

    assert classify_error(APITimeoutError()) is ModelError.OTHER


def test_descriptions_say_what_happened() -> None:
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    timeout = describe_error(anthropic.APITimeoutError(request=request))
    assert timeout == "APITimeoutError: the model did not answer in time"
    assert "dropped mid-reply" in describe_error(httpx2.ReadError("reset"))
    assert describe_error(ValueError("x")) == "ValueError"


def test_a_reply_pinned_to_a_slot_fails_like_any_other_call() -> None:
    import http.client
    import urllib.error

    import pytest

    from assistant.runtime.child_server import free_port
    from assistant.runtime.completion import ModelCallError
    from assistant.runtime.llama_slot import SlotApi

    # Pinned replies go to llama.cpp over urllib: its failures read as the SDK's do.
    api = SlotApi(f"http://127.0.0.1:{free_port()}", 1, "m", max_tokens=4, timeout=5.0)
    with pytest.raises(ModelCallError) as failed:
        api.stream([{"role": "user", "content": "hi"}], system="s")
    assert failed.value.kind is ModelError.UNREACHABLE
    assert failed.value.description.endswith("could not reach the model endpoint (network down?)")
    busy = urllib.error.HTTPError("http://127.0.0.1/", 503, "busy", {}, None)  # type: ignore[arg-type]
    assert classify_error(busy) is ModelError.STATUS
    assert describe_error(busy) == "HTTPError (HTTP 503): the model request failed"
    assert classify_error(TimeoutError()) is ModelError.TIMEOUT
    assert classify_error(http.client.IncompleteRead(b"")) is ModelError.DROPPED
