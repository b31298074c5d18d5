"""The process-wide local gate: its weights and encoder load once per process."""

from __future__ import annotations

import threading

from assistant.gates.local.classifier import LocalGate

_shared_local: LocalGate | None = None
_shared_lock = threading.Lock()


def shared_local_gate() -> LocalGate:
    """One LocalGate per process: the weights and the encoder load once."""
    global _shared_local
    with _shared_lock:
        if _shared_local is None:
            _shared_local = LocalGate()
        return _shared_local
