"""A streamed reply from our own llama.cpp server in one slot of its choosing: `SlotApi`.

llama.cpp keeps one prompt cache per slot, and a request names its slot with `id_slot`. Its
Anthropic endpoint, `/v1/messages`, drops that field: `server_chat_convert_anthropic_to_oai`
copies only the messages, tools, stop sequences, max_tokens, temperature, top_p, top_k,
stream, thinking and metadata (checked on this machine: three requests naming slots 2, 1
and 0 all ran in slot 2). Its OpenAI-style `/v1/chat/completions` endpoint keeps every other
field of the body, `id_slot` included, and is the same code path: `/v1/messages` converts its
request into exactly that body. So a pinned reply goes there, with the same messages, the
same system prompt and the same sampling, and reads the same prompt.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Generator
from typing import Any

from assistant.runtime.completion import Ending, StreamingApi

# OpenAI's finish reasons as the Anthropic stop reasons `Completion.cut_off` reads.
_STOP_REASONS = {"length": "max_tokens", "stop": "end_turn"}


class SlotReplyError(RuntimeError):
    """The server answered the stream with an error of its own (e.g. an invalid slot)."""


class SlotApi(StreamingApi):
    """`MessagesApi.stream` for our own llama.cpp server, with every request in slot `slot`."""

    def __init__(
        self,
        base_url: str,
        slot: int,
        model: str,
        *,
        max_tokens: int,
        timeout: float,
        temperature: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.slot = slot
        self._model = model
        self._max_tokens = max_tokens
        self._timeout = timeout  # per read: the first token may come after a long prefill
        self._temperature = temperature
        self._clock = clock

    def _body(self, messages: list[dict[str, Any]], system: str | None) -> dict[str, Any]:
        # The body /v1/messages would have built from the same request, plus the slot.
        head = [{"role": "system", "content": system}] if system is not None else []
        body: dict[str, Any] = {
            "model": self._model,
            "messages": head + messages,
            "max_tokens": self._max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            "id_slot": self.slot,
        }
        if self._temperature is not None:
            body["temperature"] = self._temperature
        return body

    def _pieces(
        self, messages: list[dict[str, Any]], system: str | None
    ) -> Generator[str, None, Ending]:
        last: dict[str, Any] = {}  # what the final chunks say: finish reason, usage, timings
        request = urllib.request.Request(
            f"{self.base_url}/v1/chat/completions",
            data=json.dumps(self._body(messages, system)).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=self._timeout) as response:
            for chunk in _events(response):
                if "error" in chunk:
                    raise SlotReplyError(str(chunk["error"]))
                for choice in chunk.get("choices") or ():
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        yield piece
                    if choice.get("finish_reason"):
                        last["finish_reason"] = choice["finish_reason"]
                for key in ("usage", "timings"):
                    if chunk.get(key):
                        last[key] = chunk[key]
        usage = last.get("usage") or {}
        cached = (last.get("timings") or {}).get("cache_n")
        reason = last.get("finish_reason")
        return Ending(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            stop_reason=_STOP_REASONS.get(reason, reason),
            cached_tokens=None if cached is None else int(cached),
        )


def _events(response: Any) -> Any:
    """The JSON payloads of a server-sent event stream, up to `[DONE]`."""
    for raw in response:
        line = raw.decode("utf-8").strip()
        if not line.startswith("data:"):
            continue  # blank separators and comments
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return
        yield json.loads(data)
