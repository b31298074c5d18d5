"""The store's view of an embedding model: encode(texts) -> vectors, and warm()."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from memory.records import MemoryStoreError


class Encoder(Protocol):
    """What the store needs of an embedding model."""

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def warm(self) -> None: ...


class CallableEncoder:
    """Adapts a Chroma-style embedding function (callable on texts) to encode()/warm()."""

    def __init__(self, fn: Callable[[list[str]], Any]) -> None:
        self._fn = fn

    def encode(self, texts: list[str]) -> np.ndarray:
        """Vectors of `texts`, as float32."""
        return np.asarray(self._fn(list(texts)), dtype=np.float32)

    def warm(self) -> None:
        """Load the model (the function's own warm() when it has one)."""
        warm = getattr(self._fn, "warm", None)
        if callable(warm):
            warm()
        else:
            self._fn(["warm up"])


def as_encoder(embedding: Any) -> Encoder:
    """A MiniLM (encode), a Chroma embedding function (callable), or None (the shared one)."""
    if embedding is None:
        from memory.embeddings import shared_model

        return shared_model()
    if hasattr(embedding, "encode"):
        return embedding
    if callable(embedding):
        return CallableEncoder(embedding)
    raise MemoryStoreError("embedding must be a MiniLM-like encoder or an embedding function")


class Warming:
    """Loads an encoder's model on a thread started at once; wait() joins it."""

    def __init__(self, model: Encoder) -> None:
        self._error: BaseException | None = None
        # Not a daemon: a process that exits while onnxruntime is still loading aborts
        # ("terminate called without an active exception"), so exit waits for the load.
        self._thread = threading.Thread(target=self._run, args=(model,), daemon=False)
        self._thread.start()

    def _run(self, model: Encoder) -> None:
        try:
            model.warm()
        except BaseException as exc:  # noqa: BLE001 - re-raised by wait() in the caller
            self._error = exc

    def wait(self) -> None:
        """Block until the load has finished; raise what it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
