"""What answers a message: client, pipeline (responder, capture, default gate) and the gates.

A `Wiring` is never changed once built. `Switchboard` holds the current one: before each
exchange it makes sure the local model can answer, and when the model fails it builds an
offline `Wiring` and swaps it in with one assignment: a turn that already took the old
snapshot finishes on it, and no thread ever sees half of each. `Wiring.gate` is how a turn
finds the gate of a mode; `GateShelf` builds each gate on first use.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from assistant.config import GateMode
from assistant.gates.registry import GateConfigError, gate_for, modes_for, needs_a_model
from assistant.reply.capture import Capturer
from assistant.reply.offline import OfflineResponder
from assistant.runtime.local_model import ModelState
from assistant.text import end_sentence
from assistant.turn.pipeline import Pipeline

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.gates.base import Gate
    from assistant.runtime.local_model import LocalModel, ModelStatus
    from memory.corrections import CorrectionBook

_log = logging.getLogger(__name__)


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


class Switchboard:
    """The current `Wiring`, and the local model it answers with; safe to share across threads.

    `prepare` runs before each exchange (the chat calls it), then the exchange reads
    `current` once: a fallback to offline that `prepare` made is used at once.
    """

    def __init__(self, settings: Settings, wiring: Wiring, local: LocalModel | None = None):
        self.settings = settings
        self.local = local  # the llama.cpp server this process owns, if any
        self._wiring = wiring
        self._swap_lock = threading.Lock()  # two sessions falling back build one snapshot

    def current(self) -> Wiring:
        """The snapshot of what answers now; take it once and use it for a whole turn."""
        return self._wiring

    def prepare(self, on_wait: Callable[[ModelStatus], None] | None = None) -> str | None:
        """Make sure the model can answer before a turn; returns a notice when something changed.

        A local model that is still loading is waited for (`on_wait` sees its progress); one
        that died is restarted; one that cannot start sends replies to the offline parts.
        """
        if self.local is None or self._wiring.offline:
            return None
        status = self.local.status
        waited = status.loading
        while status.loading:
            if on_wait is not None:
                on_wait(status)
            status = self.local.wait_ready(0.25)
        if waited and on_wait is not None:
            on_wait(status)  # the wait is over: ready, or failed
        reason = self.failed_reason()
        if reason is not None:
            self._swap(self._offline_wiring(reason))
            return f"Answering offline: {reason}"
        if not status.ready:
            return None  # stopped: the turn fails open and says why
        restarted = self.local.ensure_running()
        return end_sentence(restarted[0].upper() + restarted[1:]) if restarted else None

    def failed_reason(self) -> str | None:
        """Why the local model cannot answer, once it failed and before the swap; else None."""
        if self.local is None or self._wiring.offline:
            return None
        status = self.local.status
        if status.state is not ModelState.FAILED:
            return None
        return f"the local model could not start: {status.error}"

    def _offline_wiring(self, reason: str) -> Wiring:
        """The offline parts, keeping the store and every gate that runs without a model."""
        old = self._wiring
        built = old.gates.built() if old.gates is not None else {}
        gates = GateShelf.for_settings(self.settings, None, built, old.corrections)
        gate = old.pipeline.gate
        if gate.name not in gates.modes:
            gate = gates.get(GateMode.LOCAL)
        offline = OfflineResponder()
        pipeline = old.pipeline.with_(
            gate=gate, responder=offline, capturer=Capturer(old.pipeline.store)
        )
        # The same corrections: what the user taught the gate outlives the model.
        return replace(old, pipeline=pipeline, client=None, gates=gates, offline_reason=reason)

    def _swap(self, wiring: Wiring) -> None:
        """Replace the snapshot whole; a second fallback racing the first changes nothing."""
        with self._swap_lock:
            if self._wiring.offline:
                return
            _log.warning("falling back to the offline responder: %s", wiring.offline_reason)
            self._wiring = wiring
