"""The fake Messages API speaks what the real SDK expects, streaming included."""

from __future__ import annotations

import pytest

from assistant.runtime.fake_api import Reply


def _stream(client, **kw):
    return client.messages.stream(
        model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}], **kw
    )


def test_streaming_sse_reply_arrives_in_pieces(fake_api, sdk_client):
    fake_api.queue(Reply(text="Thursday 7:30pm at Nopa with Alex.", output_tokens=9))
    with _stream(sdk_client) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(pieces) > 1
    assert "".join(pieces) == "Thursday 7:30pm at Nopa with Alex."
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 9
    assert fake_api.requests[0].body["stream"] is True


def test_streaming_thinking_block_comes_before_the_text(fake_api, sdk_client):
    fake_api.queue(Reply(thinking="Let me think.", text="Four."))
    with _stream(sdk_client) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Four."
    assert [block.type for block in final.content] == ["thinking", "text"]


def test_stream_broken_mid_reply_raises(fake_api, sdk_client):
    fake_api.queue(Reply(text="one two three four five six seven eight", break_after=1))
    received = []
    with (
        pytest.raises(Exception, match="incomplete chunked read|peer closed"),
        _stream(sdk_client) as stream,
    ):
        received.extend(stream.text_stream)
    assert "".join(received) == "one two three "


def test_error_status_carries_retry_after(fake_api, sdk_client):
    import anthropic

    fake_api.queue(Reply(status=429, headers={"retry-after": "7"}))
    with pytest.raises(anthropic.RateLimitError) as info:
        sdk_client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert info.value.response.headers["retry-after"] == "7"


def test_api_key_goes_out_as_a_header(fake_api, sdk_client):
    fake_api.queue(Reply(text="ok"))
    sdk_client.messages.create(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]
    )
    headers = {k.lower(): v for k, v in fake_api.requests[0].headers.items()}
    assert "sk-test-fake" in (headers.get("x-api-key", "") + headers.get("authorization", ""))
