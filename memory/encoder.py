"""The store's view of an embedding model: encode(texts) -> vectors, and warm()."""

from __future__ import annotations

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
