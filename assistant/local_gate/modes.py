"""The process-wide local gate, and `build_gate`: a gate mode from the settings, built."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assistant.gate import Gate, LlmGate, always_gate, length_gate, never_gate
from assistant.local_gate.cascade import CascadeGate
from assistant.local_gate.classifier import LocalGate

if TYPE_CHECKING:
    from assistant.config import Settings


class GateConfigError(ValueError):
    """A gate mode cannot be built with what is configured."""


_shared_local: LocalGate | None = None
_shared_lock = threading.Lock()


def shared_local_gate() -> LocalGate:
    """One LocalGate per process: the weights and the encoder load once."""
    global _shared_local
    with _shared_lock:
        if _shared_local is None:
            _shared_local = LocalGate()
        return _shared_local


def build_gate(mode: str, settings: Settings, client: Any | None) -> Gate:
    """The gate for a mode: llm, local, cascade, always, never or length."""
    mode = mode.strip().lower()
    if mode in ("llm", "cascade"):
        if client is None:
            raise GateConfigError(
                f"gate mode '{mode}' needs a model: set ANTHROPIC_API_KEY, or "
                "ANTHROPIC_BASE_URL for a local Anthropic-compatible server"
            )
        llm = LlmGate(client, settings.gate_model, timeout=settings.gate_timeout)
        return llm if mode == "llm" else CascadeGate(shared_local_gate(), llm)
    simple: dict[str, Callable[[], Gate]] = {
        "local": shared_local_gate,
        "always": always_gate,
        "never": never_gate,
        "length": length_gate,
    }
    if mode not in simple:
        known = "llm, local, cascade, always, never, length"
        raise GateConfigError(f"unknown gate mode {mode!r}; choose one of {known}")
    return simple[mode]()
