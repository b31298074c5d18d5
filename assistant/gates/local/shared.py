"""The process-wide local gate: its weights and encoder load once per process."""

from __future__ import annotations

import functools

from assistant.gates.local.classifier import LocalGate


@functools.cache
def shared_local_gate() -> LocalGate:
    """One LocalGate per process: the weights load once, and the encoder is the shared one."""
    # Building a LocalGate loads nothing (weights and encoder load on first use, under its
    # own lock), so two threads racing here at first use cost nothing: each gets a gate
    # that reads the same 100 KB of weights and the same shared encoder.
    return LocalGate()
