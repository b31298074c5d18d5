"""Model errors: one classification, by class, read by every caller."""

from __future__ import annotations

from assistant.llm import ModelError, classify_error, describe_error


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
