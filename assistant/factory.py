"""Builds the assistant's long-lived parts from settings: client, store, gates, pipeline."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from assistant.capture import Capturer
from assistant.config import GATE_MODES, Settings
from assistant.gate import Gate
from assistant.llm import make_client
from assistant.offline import OfflineResponder
from assistant.pipeline import Pipeline
from assistant.respond import ModelResponder
from memory.store import MemoryStore

MODEL_GATE_MODES = ("llm", "cascade")  # need a configured model


@dataclass
class Assistant:
    """Everything a UI needs, built once per process and shared by its sessions."""

    settings: Settings
    client: Any
    store: MemoryStore
    pipeline: Pipeline
    _gates: dict[str, Gate] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def offline(self) -> bool:
        """True when no model is configured: local gate and offline responder."""
        return self.client is None

    @property
    def available_gate_modes(self) -> tuple[str, ...]:
        """Gate modes that can run with this configuration."""
        if self.offline:
            return tuple(m for m in GATE_MODES if m not in MODEL_GATE_MODES)
        return GATE_MODES

    def gate(self, mode: str) -> Gate:
        """The gate for `mode`, built on first use (the local gate loads its weights once)."""
        from assistant.local_gate import build_gate

        if mode not in self.available_gate_modes:
            raise ValueError(
                f"gate mode {mode!r} needs a model: set ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL"
            )
        with self._lock:
            if mode not in self._gates:
                self._gates[mode] = build_gate(mode, self.settings, self.client)
            return self._gates[mode]


def open_store(settings: Settings) -> MemoryStore:
    """The memory store the settings describe: a Chroma server when chroma_host is set."""
    return MemoryStore.open(
        settings.memory_dir,
        settings.user_id,
        host=settings.chroma_host,
        port=settings.chroma_port,
        min_similarity=settings.min_similarity,
    )


def build_assistant(settings: Settings | None = None, *, seed_if_empty: bool = True) -> Assistant:
    """Open the store, warm the model, and wire the pipeline for `settings`."""
    from memory.persona import seed_demo

    settings = settings or Settings.from_env()
    client = make_client(settings)
    store = open_store(settings)
    store.warm()  # the first search would otherwise pay ~1.5 s of model loading
    if seed_if_empty and store.count() == 0:
        seed_demo(store)
    if client is None:
        responder: Any = OfflineResponder()
        capturer = Capturer(store)
    else:
        responder = ModelResponder(client, settings.chat_model)
        capturer = Capturer(store, client, settings.gate_model)
    from assistant.local_gate import build_gate

    # llm/cascade without a model configured would fail open on every turn: use local.
    mode = settings.gate_mode
    if client is None and mode in MODEL_GATE_MODES:
        mode = "local"
    gate = build_gate(mode, settings, client)
    return Assistant(
        settings=settings,
        client=client,
        store=store,
        pipeline=Pipeline(gate=gate, store=store, responder=responder, capturer=capturer),
        _gates={mode: gate},
    )
