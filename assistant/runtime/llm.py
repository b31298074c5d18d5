"""Model calls: the Anthropic client (built lazily) and one way to call it (`MessagesApi`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from assistant.runtime.completion import Completion, Ending, ModelCallError, StreamingApi

if TYPE_CHECKING:  # the anthropic import costs ~2.5 s: only pay it when a model is configured
    import anthropic

    from assistant.config import Settings
    from assistant.runtime.llama_slot import SlotApi

# Ollama and llama.cpp ignore the key, but the SDK refuses to send a request without one.
KEYLESS_PLACEHOLDER = "no-key-needed-for-local-endpoint"


def make_client(settings: Settings) -> anthropic.Anthropic | None:
    """Build the SDK client, or None when no model is configured (offline mode)."""
    if not settings.model_configured:
        return None
    import anthropic

    return anthropic.Anthropic(
        api_key=settings.api_key or KEYLESS_PLACEHOLDER,
        base_url=settings.base_url,
        timeout=settings.chat_timeout,
        max_retries=2,
    )


def text_of(response: Any) -> str:
    """Join the text blocks of a Messages reply; thinking and other blocks are skipped."""
    return "".join(getattr(block, "text", "") for block in response.content if block.type == "text")


def json_span(text: str) -> str | None:
    """The text from the first `{` to the last `}` (fences and chatter cut off); None without a `{`.

    Empty when the last `}` comes before the first `{`, so parsing it fails as bad JSON.
    """
    start = text.find("{")
    if start < 0:
        return None
    return text[start : text.rfind("}") + 1]


def usage_of(response: Any) -> tuple[int, int]:
    """(input_tokens, output_tokens) of a reply, 0 where the endpoint reports none."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0, 0
    return int(getattr(usage, "input_tokens", 0) or 0), int(getattr(usage, "output_tokens", 0) or 0)


DEFAULT_READ_TIMEOUT_S = 60.0  # as MEMGATE_CHAT_TIMEOUT's default


def _read_timeout(client: Any) -> float:
    """The client's own timeout in seconds, when it is a plain number (make_client's is)."""
    timeout = getattr(client, "timeout", None)
    return float(timeout) if isinstance(timeout, (int, float)) else DEFAULT_READ_TIMEOUT_S


class MessagesApi(StreamingApi):
    """The one way gate, capture and reply call the Messages API: a request in, a Completion out.

    Every failure, the SDK's or the connection's, comes out as a ModelCallError with its
    kind (`classify_error`) and a readable account (`describe_error`).
    """

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        max_tokens: int,
        timeout: float | None = None,  # None: the client's own
        max_retries: int | None = None,  # None: the client's own
        temperature: float | None = None,  # None: the endpoint's default sampling
        clock: Callable[[], float] = time.perf_counter,
        llama_url: str | None = None,
    ) -> None:
        # Where our own llama.cpp server listens, when `client` talks to it (None for any
        # other endpoint): only there can a call be pinned to a slot (`pinned`).
        self._llama_url = llama_url
        self._client = (
            client if max_retries is None else client.with_options(max_retries=max_retries)
        )
        self._model = model
        self._max_tokens = max_tokens
        self._timeout = timeout
        self._temperature = temperature
        self._clock = clock

    def pinned(self, slot: int) -> MessagesApi | SlotApi:
        """These calls in slot `slot` (its own prompt cache) of our llama.cpp server, else self."""
        if self._llama_url is None:
            return self
        from assistant.runtime.llama_slot import SlotApi

        timeout = self._timeout if self._timeout is not None else _read_timeout(self._client)
        return SlotApi(
            self._llama_url,
            slot,
            self._model,
            max_tokens=self._max_tokens,
            timeout=timeout,
            temperature=self._temperature,
            clock=self._clock,
        )

    def _request(self, messages: list[dict[str, Any]], system: str | None) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "messages": messages,
        }
        if system is not None:
            request["system"] = system
        if self._timeout is not None:
            request["timeout"] = self._timeout
        if self._temperature is not None:
            # anthropic 2.x has no `temperature` argument: it goes in the body as sent.
            request["extra_body"] = {"temperature": self._temperature}
        return request

    def ask(self, messages: list[dict[str, Any]], *, system: str | None = None) -> Completion:
        """One whole reply; raises ModelCallError."""
        started = self._clock()
        try:
            response = self._client.messages.create(**self._request(messages, system))
            text, tokens = text_of(response), usage_of(response)  # a malformed reply fails here
        except Exception as exc:  # noqa: BLE001 - classified and raised as ModelCallError
            raise ModelCallError(exc) from exc
        return Completion(
            text=text,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            stop_reason=getattr(response, "stop_reason", None),
            elapsed_ms=(self._clock() - started) * 1000.0,
        )

    def _pieces(
        self, messages: list[dict[str, Any]], system: str | None
    ) -> Generator[str, None, Ending]:
        with self._client.messages.stream(**self._request(messages, system)) as stream:
            yield from stream.text_stream
            final = stream.get_final_message()
        tokens = usage_of(final)
        return Ending(
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            stop_reason=getattr(final, "stop_reason", None),
        )
