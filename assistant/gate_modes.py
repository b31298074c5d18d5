"""The gate modes, in one registry: name -> what it does -> what it needs -> how to build it.

Settings validation, the factory, the evaluation CLI and the UI's help text all read this
table, so a new mode is one entry here. Builders import lazily: reading the table is free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.gate import Gate


class GateConfigError(ValueError):
    """A gate mode that does not exist, or that needs a model when none is configured."""


@dataclass(frozen=True)
class GateMode:
    """One way of deciding whether a message needs memory."""

    name: str
    summary: str  # one line for help texts
    needs_model: bool  # True: calls the LLM through the anthropic client
    build: Callable[[Settings, Any], Gate]


def _llm(settings: Settings, client: Any) -> Gate:
    from assistant.gate import GATE_PROMPT, LOCAL_GATE_PROMPT, LlmGate

    if settings.native_url is not None:
        # Our own llama.cpp server: the same question, its answer constrained by a grammar,
        # asked the way that measured best for this model (assistant/llm_trust.py).
        from assistant.llm_trust import load_trust
        from assistant.native_gate import NativeLlamaGate

        trust = load_trust(settings.gate_model_key)
        return NativeLlamaGate(
            settings.native_url,
            timeout=settings.gate_timeout,
            threshold=trust.threshold,
            style=trust.style,
        )
    # A keyless endpoint is a local model: small, and better with worked examples.
    prompt = LOCAL_GATE_PROMPT if settings.api_key is None else GATE_PROMPT
    return LlmGate(client, settings.gate_model, timeout=settings.gate_timeout, prompt=prompt)


def _local(settings: Settings, client: Any) -> Gate:
    from assistant.local_gate import shared_local_gate

    return shared_local_gate()


def _cascade(settings: Settings, client: Any) -> Gate:
    from assistant.llm_trust import load_trust
    from assistant.local_gate import CascadeGate, shared_local_gate

    trust = load_trust(settings.gate_model_key)
    return CascadeGate(shared_local_gate(), _llm(settings, client), trust)


def _rule(factory_name: str) -> Callable[[Settings, Any], Gate]:
    def build(settings: Settings, client: Any) -> Gate:
        import assistant.gate as gate

        return getattr(gate, factory_name)()

    return build


MODES: dict[str, GateMode] = {
    m.name: m
    for m in (
        GateMode("llm", "the small model decides (the seed gate)", True, _llm),
        GateMode("local", "an offline classifier on MiniLM embeddings, a few ms", False, _local),
        GateMode("cascade", "local first; the LLM only when local is unsure", True, _cascade),
        GateMode("always", "retrieve every turn, like mem0 / Zep", False, _rule("always_gate")),
        GateMode("never", "no memory", False, _rule("never_gate")),
        GateMode("length", "skip messages of 30 characters or fewer", False, _rule("length_gate")),
    )
}
NAMES = tuple(MODES)


def modes_for(model_available: bool) -> tuple[str, ...]:
    """The mode names that can run, given whether a model endpoint is available."""
    return tuple(m.name for m in MODES.values() if model_available or not m.needs_model)


def help_text() -> str:
    """One line per mode, for a UI tooltip or a CLI --help."""
    return " · ".join(f"{m.name}: {m.summary}" for m in MODES.values())


def build_gate(mode: str, settings: Settings, client: Any | None) -> Gate:
    """The gate for `mode`; GateConfigError for an unknown mode or a missing model."""
    entry = MODES.get(mode.strip().lower())
    if entry is None:
        raise GateConfigError(f"unknown gate mode {mode!r}; choose one of {', '.join(NAMES)}")
    if entry.needs_model and client is None:
        raise GateConfigError(
            f"gate mode '{entry.name}' needs a model: set ANTHROPIC_API_KEY, or "
            "ANTHROPIC_BASE_URL for an Anthropic-compatible server, or leave both unset for "
            "the local llama.cpp model"
        )
    return entry.build(settings, client)
