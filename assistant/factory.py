"""Builds the assistant's long-lived parts from settings: client, store, gates, pipeline."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assistant.capture import Capturer
from assistant.chat import Chat
from assistant.config import Settings
from assistant.gate import Gate
from assistant.gate_modes import modes_for
from assistant.llm import make_client
from assistant.local_model import ModelState
from assistant.offline import OfflineResponder
from assistant.pipeline import Pipeline
from assistant.respond import ModelResponder
from assistant.text import end_sentence
from assistant.wiring import GateShelf, Wiring, needs_a_model

if TYPE_CHECKING:  # the store imports Chroma: only building one pays for it
    from assistant.llm_trust import LlmTrust
    from assistant.local_model import LocalModel, ModelStatus
    from memory.corrections import CorrectionBook
    from memory.store import MemoryStore

_log = logging.getLogger(__name__)


class Assistant:
    """Everything a UI needs, built once per process and shared by its sessions.

    What answers lives in one immutable `Wiring`; falling back to offline builds a new one
    and swaps it in whole (`_swap`). Reading a status or a property never changes it.
    """

    def __init__(
        self,
        settings: Settings,
        store: MemoryStore,
        wiring: Wiring,
        local: LocalModel | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.local = local  # the llama.cpp server this process owns, if any
        self._wiring = wiring
        self._swap_lock = threading.Lock()  # two sessions falling back build one snapshot

    @property
    def wiring(self) -> Wiring:
        """The current snapshot of what answers; take it once and use it for a whole turn."""
        return self._wiring

    @property
    def pipeline(self) -> Pipeline:
        """The current pipeline (responder, capture, default gate)."""
        return self._wiring.pipeline

    @property
    def client(self) -> Any:
        """The anthropic client in use, or None when replies come from offline parts."""
        return self._wiring.client

    @property
    def corrections(self) -> CorrectionBook | None:
        """The user's corrections of the gate (issue 23), which every judging gate consults."""
        return self._wiring.corrections

    @property
    def offline_reason(self) -> str | None:
        """Why replies come (or, once a turn starts, will come) from the offline responder."""
        return self._wiring.offline_reason or self._failed_reason()

    @property
    def offline(self) -> bool:
        """True when replies come, or the next turn's will, from the offline responder."""
        return self._wiring.offline or self._failed_reason() is not None

    @property
    def available_gate_modes(self) -> tuple[str, ...]:
        """Gate modes that can run with this configuration."""
        return modes_for(not self.offline)

    @property
    def default_gate_mode(self) -> str:
        """The gate mode a new session starts with."""
        mode = self._wiring.pipeline.gate.name
        return mode if mode in self.available_gate_modes else "local"

    def gate(self, mode: str) -> Gate:
        """The gate for `mode`, built on first use (the local gate loads its weights once)."""
        if mode not in self.available_gate_modes:  # a failed model: offline modes only
            raise needs_a_model(mode)
        return self._wiring.gate(mode)

    @property
    def chat(self) -> Chat:
        """The home of a message, reading this assistant's current wiring."""
        return Chat(lambda: self._wiring, self.prepare_turn)

    def model_status(self) -> ModelStatus | None:
        """The local model's status, or None when this process runs no local model."""
        return None if self.local is None else self.local.status

    def _failed_reason(self) -> str | None:
        status = self.model_status()
        if status is None or status.state is not ModelState.FAILED or self._wiring.offline:
            return None
        return f"the local model could not start: {status.error}"

    def prepare_turn(self, on_wait: Callable[[ModelStatus], None] | None = None) -> str | None:
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
        reason = self._failed_reason()
        if reason is not None:
            self._swap(self._offline_wiring(reason))
            return f"Answering offline: {reason}"
        if not status.ready:
            return None  # stopped: the turn fails open and says why
        restarted = self.local.ensure_running()
        return end_sentence(restarted[0].upper() + restarted[1:]) if restarted else None

    def _offline_wiring(self, reason: str) -> Wiring:
        """The offline parts, keeping the store and every gate that runs without a model."""
        old = self._wiring
        built = old.gates.built() if old.gates is not None else {}
        gates = GateShelf.for_settings(self.settings, None, built, old.corrections)
        gate = old.pipeline.gate
        if gate.name not in gates.modes:
            gate = gates.get("local")
        pipeline = old.pipeline.with_(
            gate=gate, responder=OfflineResponder(), capturer=Capturer(self.store)
        )
        return Wiring(
            pipeline=pipeline,
            client=None,
            gates=gates,
            offline_reason=reason,
            corrections=old.corrections,
        )

    def _swap(self, wiring: Wiring) -> None:
        """Replace the snapshot whole; a second fallback racing the first changes nothing."""
        with self._swap_lock:
            if self._wiring.offline:
                return
            _log.warning("falling back to the offline responder: %s", wiring.offline_reason)
            self._wiring = wiring

    def warm(self) -> None:
        """Pay first-use costs now, not on the presenter's first click: gate and store."""
        self.pipeline.gate.warm()
        self.store.search("dentist appointment", k=1)

    def reset_memories(self) -> None:
        """Replace every memory with the demo persona."""
        from memory.persona import seed_demo

        self.store.clear()
        seed_demo(self.store)

    def llm_trust(self) -> LlmTrust:
        """What the LLM gate of this configuration's model was measured to be worth."""
        from assistant.llm_trust import load_trust

        return load_trust(self.settings.gate_model_key)

    def warm_llm_gate(self) -> None:
        """Have the model read the LLM gate's prompt once, so its first decision is not cold."""
        if not self.offline:
            self.gate("llm").warm()

    def restart_model(self) -> str:
        """Restart the local model by hand (the sidebar button)."""
        if self.local is None:
            return "There is no local model in this configuration."
        return self.local.restart("restarted on request")


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
    return settings.store.open()


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
        # native_url is set when the model is our own llama.cpp server: compare mode's twins
        # can then each answer in a slot (prompt cache) of their own.
        responder = ModelResponder(
            client,
            settings.chat_model,
            llama_url=settings.native_url,
            temperature=settings.reply_temperature,
        )
        capturer = Capturer(store, client, settings.gate_model)
    # llm/cascade without a model would fail open on every turn: use local instead.
    mode = settings.gate_mode
    if mode not in modes_for(client is not None):
        mode = "local"
    # One book per process, on the store's own Chroma client: every gate shares it.
    from assistant.corrections import open_corrections

    corrections = open_corrections(store)
    gates = GateShelf.for_settings(settings, client, corrections=corrections)
    pipeline = Pipeline(gate=gates.get(mode), store=store, responder=responder, capturer=capturer)
    wiring = Wiring(
        pipeline=pipeline,
        client=client,
        gates=gates,
        offline_reason=offline_reason,
        corrections=corrections,
    )
    assistant = Assistant(settings, store, wiring, local)
    if local is not None:
        local.on_ready(assistant.warm_llm_gate)
    return assistant
