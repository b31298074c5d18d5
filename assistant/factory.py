"""Builds the assistant's long-lived parts from settings: client, store, gates, pipeline."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assistant.capture import Capturer
from assistant.config import Settings
from assistant.gate import Gate
from assistant.gate_modes import GateConfigError, build_gate, modes_for
from assistant.llm import make_client
from assistant.offline import OfflineResponder
from assistant.pipeline import Pipeline
from assistant.respond import ModelResponder
from assistant.text import end_sentence
from memory.store import MemoryStore

if TYPE_CHECKING:
    from assistant.corrections import CorrectionResult
    from assistant.gate import GateDecision
    from assistant.llm_trust import LlmTrust
    from assistant.local_model import LocalModel, ModelStatus
    from memory.corrections import CorrectionBook

_log = logging.getLogger(__name__)


@dataclass
class Assistant:
    """Everything a UI needs, built once per process and shared by its sessions."""

    settings: Settings
    client: Any
    store: MemoryStore
    pipeline: Pipeline
    local: LocalModel | None = None  # the llama.cpp server this process owns, if any
    offline_reason: str | None = None  # why replies come from the offline responder
    # The user's corrections of the gate (issue 23): every judging gate built here consults
    # them first, so one "Wrong decision?" click changes the next close message's decision.
    corrections: CorrectionBook | None = None
    _gates: dict[str, Gate] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def offline(self) -> bool:
        """True when replies come from the offline responder (no model to call)."""
        return self.client is None

    @property
    def available_gate_modes(self) -> tuple[str, ...]:
        """Gate modes that can run with this configuration."""
        return modes_for(not self.offline)

    def gate(self, mode: str) -> Gate:
        """The gate for `mode`, built on first use (the local gate loads its weights once)."""
        if mode not in self.available_gate_modes:
            raise GateConfigError(
                f"gate mode {mode!r} needs a model: set ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL,"
                " or let the local model start"
            )
        with self._lock:
            if mode not in self._gates:
                self._gates[mode] = corrected_gate(
                    mode, self.settings, self.client, self.corrections
                )
            return self._gates[mode]

    def correct(self, message: str, decision: GateDecision) -> CorrectionResult:
        """Record the opposite of `decision` for `message` (the "Wrong decision?" button)."""
        from assistant.corrections import correct

        if self.corrections is None:
            raise ValueError("this assistant keeps no corrections")
        return correct(self.corrections, message, decision)

    def model_status(self) -> ModelStatus | None:
        """The local model's status, or None when this process runs no local model."""
        return None if self.local is None else self.local.status

    def prepare_turn(self, wait_s: float | None = None) -> str | None:
        """Make sure the model can answer before a turn; returns a notice when something changed.

        A local model that is still loading is waited for (up to `wait_s`); one that died is
        restarted; one that cannot start sends replies to the offline responder, and says so.
        """
        if self.local is None or self.offline:
            return None
        status = self.local.wait_ready(wait_s)
        if self.fall_back_if_failed():
            return f"Answering offline: {self.offline_reason}"
        if not status.ready:
            return None  # still loading after wait_s: the turn fails open and says why
        restarted = self.local.ensure_running()
        return end_sentence(restarted[0].upper() + restarted[1:]) if restarted else None

    def fall_back_if_failed(self) -> bool:
        """Switch to offline once the local model has failed to start; True if it just did."""
        status = self.model_status()
        if status is None or status.state != "failed" or self.offline:
            return False
        self.use_offline(f"the local model could not start: {status.error}")
        return True

    def llm_trust(self) -> LlmTrust:
        """What the LLM gate of this configuration's model was measured to be worth."""
        from assistant.llm_trust import load_trust

        return load_trust(self.settings.gate_model_key)

    def warm_llm_gate(self) -> None:
        """Have the model read the LLM gate's prompt once, so its first decision is not cold."""
        if self.offline:
            return
        gate = self.gate("llm")
        warm = getattr(gate, "warm", None)
        if warm is not None:
            warm()

    def restart_model(self) -> str:
        """Restart the local model by hand (the sidebar button)."""
        if self.local is None:
            return "There is no local model in this configuration."
        return self.local.restart("restarted on request")

    def use_offline(self, reason: str) -> None:
        """Switch replies and capture to the offline parts, keeping the store and local gate."""
        with self._lock:
            if self.client is None:
                return
            _log.warning("falling back to the offline responder: %s", reason)
            self.offline_reason = reason
            self.client = None
            self.pipeline.responder = OfflineResponder()
            self.pipeline.capturer = Capturer(self.store)
            for mode in [m for m in self._gates if m not in modes_for(False)]:
                del self._gates[mode]
            if self.pipeline.gate.name not in modes_for(False):
                self.pipeline.gate = corrected_gate("local", self.settings, None, self.corrections)
                self._gates["local"] = self.pipeline.gate


def corrected_gate(
    mode: str, settings: Settings, client: Any | None, book: CorrectionBook | None
) -> Gate:
    """The gate for `mode`, consulting the user's corrections first when it judges messages."""
    from assistant.corrected_gate import with_corrections

    # Rule modes (always, never, length) come back unwrapped: a baseline must not bend.
    return with_corrections(build_gate(mode, settings, client), book)


def start_local_model(settings: Settings) -> tuple[Settings, LocalModel]:
    """Start this process's llama.cpp server; the returned settings point at it."""
    from assistant.local_model import LocalModel

    local = LocalModel(settings.local_model or None, cache_dir=settings.model_cache_dir).start()
    pointed = settings.with_(
        base_url=local.base_url,
        gate_model=local.alias,
        chat_model=local.alias,
        native_url=local.base_url,
    )
    return pointed, local


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
    """Open the store, start or reach the model, and wire the pipeline for `settings`."""
    from memory.persona import seed_demo

    settings = settings or Settings.from_env()
    local = None
    offline_reason = None
    if settings.wants_local_model:
        # Loading runs in the background: the page (and the store below) don't wait for it.
        settings, local = start_local_model(settings)
    elif not settings.model_configured:
        offline_reason = (
            "the local model is switched off (MEMGATE_LOCAL_MODEL=off) and no key is set"
        )
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
    # llm/cascade without a model would fail open on every turn: use local instead.
    mode = settings.gate_mode
    if mode not in modes_for(client is not None):
        mode = "local"
    # One book per process, on the store's own Chroma client: every gate shares it.
    from assistant.corrections import open_corrections

    corrections = open_corrections(store)
    gate = corrected_gate(mode, settings, client, corrections)
    assistant = Assistant(
        settings=settings,
        client=client,
        store=store,
        pipeline=Pipeline(gate=gate, store=store, responder=responder, capturer=capturer),
        local=local,
        offline_reason=offline_reason,
        corrections=corrections,
        _gates={mode: gate},
    )
    if local is not None:
        local.on_ready(assistant.warm_llm_gate)
    return assistant
