"""Model calls: building the Anthropic client lazily and reading its replies."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from assistant.text import Label

if TYPE_CHECKING:  # the anthropic import costs ~2.5 s: only pay it when a model is configured
    import anthropic

    from assistant.config import Settings

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
    if status is not None:
        return f"{name} (HTTP {status}): {_STATUS_HINTS.get(status, 'the model request failed')}"
    hint = _KIND_HINTS.get(classify_error(exc))
    return f"{name}: {hint}" if hint else name
