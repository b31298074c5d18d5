"""Model calls: the Anthropic client (built lazily), one way to call it, its replies and errors."""

from __future__ import annotations

import http.client
import sys
import time
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.text import Label

if TYPE_CHECKING:  # the anthropic import costs ~2.5 s: only pay it when a model is configured
    import anthropic

    from assistant.config import Settings
    from assistant.llama_slot import SlotApi

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


class ModelError(Label):
    """What kind of failure a model call ended in: the one classification every caller reads."""

    TIMEOUT = "timeout"  # no answer in time
    STATUS = "status"  # the endpoint answered with an HTTP error (401, 429, 529, ...)
    UNREACHABLE = "unreachable"  # no connection to the endpoint
    DROPPED = "dropped"  # the connection broke mid-reply
    OTHER = "other"


def classify_error(exc: BaseException) -> ModelError:
    """The kind of a model call's failure, by the SDK's and its HTTP stack's own classes."""
    # Only what is already imported can have raised: checking never pays anthropic's import.
    sdk = sys.modules.get("anthropic")
    if sdk is not None:
        if isinstance(exc, sdk.APITimeoutError):  # before its base, APIConnectionError
            return ModelError.TIMEOUT
        if isinstance(exc, sdk.APIStatusError):
            return ModelError.STATUS
        if isinstance(exc, sdk.APIConnectionError):
            return ModelError.UNREACHABLE
    for name in ("httpx2", "httpx"):  # anthropic 2.x streams over httpx2
        http = sys.modules.get(name)
        if http is not None and isinstance(
            exc, (http.RemoteProtocolError, http.ReadError, http.ReadTimeout)
        ):
            return ModelError.DROPPED
    return _classify_stdlib(exc)


def _classify_stdlib(exc: BaseException) -> ModelError:
    """The kind of a failure of a call made with urllib (a reply pinned to a llama.cpp slot)."""
    if isinstance(exc, urllib.error.HTTPError):  # before its base, URLError
        return ModelError.STATUS
    if isinstance(exc, urllib.error.URLError):  # raised while connecting
        timed_out = isinstance(exc.reason, TimeoutError)
        return ModelError.TIMEOUT if timed_out else ModelError.UNREACHABLE
    if isinstance(exc, TimeoutError):
        return ModelError.TIMEOUT
    if isinstance(exc, ConnectionRefusedError):
        return ModelError.UNREACHABLE
    if isinstance(exc, (ConnectionError, http.client.HTTPException)):
        return ModelError.DROPPED
    return ModelError.OTHER


_STATUS_HINTS = {
    401: "the API key was rejected (check ANTHROPIC_API_KEY)",
    403: "the API key may not use this model",
    404: "the model or endpoint was not found (check the model name and ANTHROPIC_BASE_URL)",
    429: "rate limited by the model provider; try again in a moment",
    500: "the model provider had an internal error",
    529: "the model provider is overloaded; try again in a moment",
}
_KIND_HINTS = {
    ModelError.TIMEOUT: "the model did not answer in time",
    ModelError.UNREACHABLE: "could not reach the model endpoint (network down?)",
    ModelError.DROPPED: "the connection to the model dropped mid-reply",
}


def describe_error(exc: BaseException) -> str:
    """A short, readable account of a model error that never includes credentials."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(exc, urllib.error.HTTPError):
        status = exc.code
    if status is not None:
        return f"{name} (HTTP {status}): {_STATUS_HINTS.get(status, 'the model request failed')}"
    hint = _KIND_HINTS.get(classify_error(exc))
    return f"{name}: {hint}" if hint else name


@dataclass(frozen=True)
class Completion:
    """What one Messages API call returned: its text (text blocks only) and what it cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None
    first_token_ms: float | None = None  # streamed calls only
    elapsed_ms: float = 0.0
    # Prompt tokens the server read from its prompt cache, where it says (our llama.cpp).
    cached_tokens: int | None = None

    @property
    def cut_off(self) -> bool:
        """True when the reply stopped at max_tokens, not where the model ended it."""
        return self.stop_reason == "max_tokens"


class ModelCallError(Exception):
    """A model call that failed: its kind, a readable account, and any text that arrived."""

    def __init__(
        self, cause: BaseException, partial: str = "", first_token_ms: float | None = None
    ) -> None:
        super().__init__(describe_error(cause))
        self.cause = cause
        self.kind = classify_error(cause)
        self.description = describe_error(cause)
        self.partial = partial  # streamed text received before the failure
        self.first_token_ms = first_token_ms

    @property
    def cause_name(self) -> str:
        """The class name of what the SDK raised, e.g. APIConnectionError."""
        return type(self.cause).__name__


class StreamedText:
    """A reply's pieces as they stream in: the text so far, and when the first piece came."""

    def __init__(self, clock: Callable[[], float], on_text: Callable[[str], None] | None) -> None:
        self._clock = clock
        self._on_text = on_text
        self._started = clock()
        self._pieces: list[str] = []
        self.first_token_ms: float | None = None

    def add(self, piece: str) -> None:
        """One more piece: timed if it is the first, and passed on to `on_text`."""
        if self.first_token_ms is None:
            self.first_token_ms = (self._clock() - self._started) * 1000.0
        self._pieces.append(piece)
        if self._on_text is not None:
            self._on_text(piece)

    def failed(self, cause: BaseException) -> ModelCallError:
        """The error to raise for `cause`, with the text that had arrived."""
        return ModelCallError(cause, "".join(self._pieces), self.first_token_ms)

    def done(
        self,
        input_tokens: int,
        output_tokens: int,
        *,
        stop_reason: str | None,
        cached_tokens: int | None = None,
    ) -> Completion:
        """The whole reply, timed from the start of the call."""
        return Completion(
            text="".join(self._pieces),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            stop_reason=stop_reason,
            first_token_ms=self.first_token_ms,
            elapsed_ms=(self._clock() - self._started) * 1000.0,
            cached_tokens=cached_tokens,
        )


DEFAULT_READ_TIMEOUT_S = 60.0  # as MEMGATE_CHAT_TIMEOUT's default


def _read_timeout(client: Any) -> float:
    """The client's own timeout in seconds, when it is a plain number (make_client's is)."""
    timeout = getattr(client, "timeout", None)
    return float(timeout) if isinstance(timeout, (int, float)) else DEFAULT_READ_TIMEOUT_S


class MessagesApi:
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
        from assistant.llama_slot import SlotApi

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

    def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        system: str | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> Completion:
        """A reply streamed piece by piece to `on_text`; raises ModelCallError (with `partial`)."""
        streamed = StreamedText(self._clock, on_text)
        try:
            with self._client.messages.stream(**self._request(messages, system)) as stream:
                for piece in stream.text_stream:
                    streamed.add(piece)
                final = stream.get_final_message()
            tokens = usage_of(final)
        except Exception as exc:  # noqa: BLE001 - classified and raised as ModelCallError
            raise streamed.failed(exc) from exc
        return streamed.done(*tokens, stop_reason=getattr(final, "stop_reason", None))
