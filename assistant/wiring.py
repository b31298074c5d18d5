"""What answers a message: client, pipeline (responder, capture, default gate) and the gates.

A `Wiring` is never changed once built. When the local model fails, the front (front.py)
builds an offline `Wiring` and swaps it in with one assignment: a turn that already took
the old snapshot finishes on it, and no thread ever sees half of each. `Wiring.gate` is
how a turn finds the gate of a mode; `GateShelf` builds each gate on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.gates.registry import GateConfigError, gate_for, modes_for, needs_a_model
from assistant.pipeline import Pipeline

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.gates.base import Gate
    from memory.corrections import CorrectionBook


class GateShelf:
    """The gates of one wiring, each built on first use (the local gate loads weights once)."""

    def __init__(
        self,
        build: Callable[[str], Gate],
        modes: tuple[str, ...],
        built: Mapping[str, Gate] | None = None,
    ) -> None:
        self._build = build
        self.modes = modes
        self._gates: dict[str, Gate] = {m: g for m, g in (built or {}).items() if m in modes}
        self._lock = threading.Lock()  # two sessions asking at once build one gate

    def get(self, mode: str) -> Gate:
        """The gate for `mode`; a mode this wiring cannot run raises GateConfigError."""
        if mode not in self.modes:
            raise needs_a_model(mode)
        with self._lock:
            if mode not in self._gates:
                self._gates[mode] = self._build(mode)
            return self._gates[mode]

    def built(self) -> dict[str, Gate]:
        """The gates built so far, for a new shelf that keeps the ones it can still run."""
        with self._lock:
            return dict(self._gates)

    @classmethod
    def for_settings(
        cls,
        settings: Settings,
        client: Any,
        built: Mapping[str, Gate] | None = None,
        corrections: CorrectionBook | None = None,
    ) -> GateShelf:
        """The shelf of every mode that can run with `client` (None: offline modes only).

        With `corrections`, every judging gate it builds consults the user's corrections
        first (issue 23); the rule modes (always, never, length) come back unwrapped.
        """
        return cls(
            lambda mode: gate_for(mode, settings, client, corrections),
            modes_for(client is not None),
            built,
        )


@dataclass(frozen=True)
class Wiring:
    """One immutable snapshot of what answers; replaced whole, never edited."""

    pipeline: Pipeline
    client: Any = None  # the anthropic client; None when replies come from offline parts
    gates: GateShelf | None = None
    offline_reason: str | None = None  # why replies come from the offline responder
    corrections: CorrectionBook | None = None  # the user's corrections its gates consult

    @property
    def offline(self) -> bool:
        """True when replies come from the offline responder (no model to call)."""
        return self.client is None

    def gate(self, mode: str | None) -> Gate:
        """The gate for `mode`; None is the pipeline's own gate."""
        if mode is None or mode == self.pipeline.gate.name:
            return self.pipeline.gate
        if self.gates is None:
            raise GateConfigError(f"gate mode {str(mode)!r} is not wired here")
        return self.gates.get(mode)
