"""Model calls: building the Anthropic client lazily and reading its replies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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


def describe_error(exc: BaseException) -> str:
    """A short, readable account of a model error that never includes credentials."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    hints = {
        401: "the API key was rejected (check ANTHROPIC_API_KEY)",
        403: "the API key may not use this model",
        404: "the model or endpoint was not found (check the model name and ANTHROPIC_BASE_URL)",
        429: "rate limited by the model provider; try again in a moment",
        500: "the model provider had an internal error",
        529: "the model provider is overloaded; try again in a moment",
    }
    if status is not None:
        return f"{name} (HTTP {status}): {hints.get(status, 'the model request failed')}"
    if name == "APITimeoutError":
        return f"{name}: the model did not answer in time"
    if name == "APIConnectionError":
        return f"{name}: could not reach the model endpoint (network down?)"
    if name in ("RemoteProtocolError", "ReadError", "ReadTimeout"):
        return f"{name}: the connection to the model dropped mid-reply"
    return name
