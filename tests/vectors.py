"""MiniLM's vectors of the gate's quality-floor rows, stored, so a test run need not embed them.

The floors (tests/integration/test_local_gate.py) judge the shipped classifier on ~4,700
messages: embedding them took ~25 s of every run, the same vectors each time. They are
stored here at float16, which moved no decision (measured when they were written, on all
6,343 held-out and fresh rows: the largest change of P(retrieve) was 0.0007; int8 moved
3, so it is not used). What still runs live: the hand
cues, the explicit rule, the weights; and a test that embeds a sample of the stored texts
again and requires the same vectors, so a changed model or pooling cannot hide behind them.

`python -m tests.vectors` writes the file again, after a floor set, the gate's reading of
a message (gate_text) or the model changes; a test says when it is due.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from memory.embeddings import MiniLM
    from training.train_gate import Example

PATH = Path(__file__).parent / "data" / "gate_vectors.npz"
REWRITE = "python -m tests.vectors"


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()[:16]


def held_out_rows() -> list[Example]:
    """Every other held-out row: the same floors hold on them as on all (0.925 / 0.992)."""
    from training.train_gate import load_examples

    return [e for e in load_examples() if e.split == "heldout"][::2]


def training_subset() -> list[Example]:
    """A few hundred rows of both splits, for the reproducibility check."""
    from training.train_gate import load_examples

    examples = load_examples()
    return [e for e in examples if e.split == "train"][::60] + [
        e for e in examples if e.split == "heldout"
    ][::30]


def floor_texts() -> list[str]:
    """The texts the floors and the reproducibility check embed, as the gate reads them."""
    from assistant.gates.local.text import gate_text
    from tests.unit.test_local_gate import FRESH_SETS, _fresh_rows

    rows = held_out_rows() + training_subset()
    for name, *_ in FRESH_SETS:
        rows += _fresh_rows(name)
    return list(dict.fromkeys(gate_text(e.message) for e in rows))


class StoredVectors:
    """An encoder that answers from the stored vectors, and embeds live what is not stored."""

    def __init__(self, live: MiniLM, path: Path = PATH) -> None:
        from memory.embeddings import MAX_TOKENS, MODEL_SHA256, TOKENIZER_SHA256

        with np.load(path) as data:
            made_by = (str(data["model_sha256"]), str(data["tokenizer_sha256"]))
            if made_by != (MODEL_SHA256, TOKENIZER_SHA256) or int(data["max_tokens"]) != MAX_TOKENS:
                raise ValueError(f"{path} was written with another embedding model: {REWRITE}")
            self._vectors = data["vectors"]
            self._row = {bytes(key): i for i, key in enumerate(data["keys"])}
        self.live = live

    def stored(self, text: str) -> np.ndarray | None:
        """The stored float32 vector of `text`, or None."""
        row = self._row.get(_key(text))
        return None if row is None else self._vectors[row].astype(np.float32)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """One vector per text: stored where it is, else from the live model."""
        found = [self.stored(t) for t in texts]
        todo = [i for i, vector in enumerate(found) if vector is None]
        if todo:
            fresh = self.live.encode([texts[i] for i in todo], batch_size)
            for i, vector in zip(todo, fresh, strict=True):
                found[i] = vector
        return np.stack(found) if found else np.zeros((0, self._vectors.shape[1]), np.float32)


def write(path: Path = PATH) -> int:
    """Embed the floor texts with the live model and store them; returns how many."""
    from memory.embeddings import MAX_TOKENS, MODEL_SHA256, TOKENIZER_SHA256, MiniLM

    texts = floor_texts()
    vectors = MiniLM().encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        keys=np.array([np.frombuffer(_key(t), np.uint8) for t in texts]),
        vectors=vectors.astype(np.float16),
        model_sha256=MODEL_SHA256,
        tokenizer_sha256=TOKENIZER_SHA256,
        max_tokens=MAX_TOKENS,
    )
    return len(texts)


if __name__ == "__main__":
    print(f"stored {write()} vectors in tests/data/{PATH.name}")
