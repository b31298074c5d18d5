"""A model call's outcome: the reply (`Completion`), a streamed reply as it arrives, and the
failure (`ModelCallError`), classified once (`ModelError`) and described without secrets.

Shared by the Messages API client (assistant/runtime/llm.py) and the llama.cpp slot client
(assistant/runtime/llama_slot.py); it imports nothing of either.
"""

from __future__ import annotations

import contextlib
import http.client
import sys
import urllib.error
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypedDict

from assistant.text import Label


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


class Ending(TypedDict, total=False):
    """How a streamed reply ended, as its endpoint reports it (`StreamedText.done`'s terms)."""

    input_tokens: int
    output_tokens: int
    stop_reason: str | None
    cached_tokens: int | None


class StreamingApi(ABC):
    """An endpoint that streams replies; how a stream is timed and how it fails is shared."""

    _clock: Callable[[], float]

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
            # The endpoint's generator only reads the wire and never calls back in here;
            # closing it ends the request too when `on_text` raises part-way.
            with contextlib.closing(self._pieces(messages, system)) as pieces:
                while True:
                    try:
                        streamed.add(next(pieces))
                    except StopIteration as end:
                        ending: Ending = end.value
                        break
        except Exception as exc:  # noqa: BLE001 - classified and raised as ModelCallError
            raise streamed.failed(exc) from exc
        return streamed.done(
            ending.get("input_tokens", 0),
            ending.get("output_tokens", 0),
            stop_reason=ending.get("stop_reason"),
            cached_tokens=ending.get("cached_tokens"),
        )

    @abstractmethod
    def _pieces(
        self, messages: list[dict[str, Any]], system: str | None
    ) -> Generator[str, None, Ending]:
        """Send the request; yield the reply's text as it arrives, and return how it ended."""
