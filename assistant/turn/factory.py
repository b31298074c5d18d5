"""Builds the assistant's front from settings: local model, client, store, gates, pipeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assistant.config import GateMode, Settings
from assistant.gates.registry import modes_for
from assistant.reply.capture import Capturer
from assistant.reply.offline import OfflineResponder
from assistant.reply.respond import ModelResponder
from assistant.runtime.llm import make_client
from assistant.turn.front import Assistant
from assistant.turn.pipeline import Pipeline
from assistant.turn.wiring import GateShelf, Wiring

if TYPE_CHECKING:  # the store imports Chroma: only building one pays for it
    from assistant.runtime.local_model import LocalModel
    from memory.store import MemoryStore

__all__ = ["Assistant", "build_assistant", "open_store", "start_local_model"]


def start_local_model(settings: Settings, **options: Any) -> tuple[Settings, LocalModel]:
    """Start this process's llama.cpp server; the returned settings point at it.

    `options` go to LocalModel (a benchmark may pin `threads`, for one).
    """
    from assistant.runtime.local_model import LocalModel

    local = LocalModel(
        settings.local_model or None, cache_dir=settings.model_cache_dir, **options
    ).start()
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
        mode = GateMode.LOCAL
    # One book per process, on the store's own Chroma client: every gate shares it.
    from assistant.gates.corrections.actions import open_corrections

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
