"""The offline MiniLM encoder and its Chroma registration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.embeddings import (
    MODEL_PACKAGE,
    TOKENIZER_PATH,
    EmbeddingModelError,
    MiniLM,
    MiniLMEmbeddingFunction,
    shared_model,
    verify_file,
)


def test_vectors_are_normalised_and_semantic():
    model = shared_model()
    vecs = model.encode(
        ["when am I meeting Alex", "meeting with Alex on Thursday", "the capital of France"]
    )
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > 0.7 > 0.2 > vecs[0] @ vecs[2]


def test_batch_order_and_padding_do_not_change_vectors():
    # Each batch pads to its longest text, so a vector must not depend on its neighbours.
    model = shared_model()
    short, long = "hi", "a much longer sentence " * 20
    model.clear_cache()
    alone = model.encode([short])[0]
    model.clear_cache()  # else "hi" would come from the cache, not from a padded batch
    together = model.encode([long, short])
    assert np.allclose(together[1], alone, atol=1e-4)


def test_padding_goes_to_the_longest_text_not_256():
    model = shared_model()
    model.warm()
    encodings = model._load().tokenizer.encode_batch(["hello there", "a b c d e f"])
    assert len(encodings[0].ids) == len(encodings[1].ids) < 20


def test_long_text_is_truncated_not_an_error():
    vec = shared_model().encode(["word " * 100_000])
    assert vec.shape == (1, 384) and np.isfinite(vec).all()


def test_wrong_or_missing_file_names_the_package(tmp_path: Path):
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbeddingModelError, match=MODEL_PACKAGE.split("==")[0]):
        MiniLM(model_path=fake).encode(["x"])
    with pytest.raises(EmbeddingModelError, match="missing"):
        verify_file(tmp_path / "nope.onnx", "0" * 64, "reinstall")


def test_tampered_tokenizer_is_refused(tmp_path: Path):
    copy = tmp_path / "tokenizer.json"
    copy.write_bytes(TOKENIZER_PATH.read_bytes() + b" ")
    with pytest.raises(EmbeddingModelError, match="sha256"):
        MiniLM(tokenizer_path=copy).encode(["x"])


def test_registered_embedding_function_round_trips_its_config():
    ef = MiniLMEmbeddingFunction()
    assert ef.name() == "memory-gate-minilm-l6-v2-int8"
    assert ef.default_space() == "cosine"
    rebuilt = MiniLMEmbeddingFunction.build_from_config(ef.get_config())
    assert np.allclose(rebuilt(["hello"])[0], ef(["hello"])[0])


def test_repeated_single_text_is_served_from_the_cache_unchanged():
    model = MiniLM()
    first = model.encode(["When am I meeting Alex?"])
    first[0, :] = 0.0  # a caller scribbling on its copy must not poison the cache
    again = model.encode(["When am I meeting Alex?"])
    batch = model.encode(["When am I meeting Alex?", "something else"])
    assert np.allclose(again[0], batch[0], atol=1e-5)
    assert np.linalg.norm(again[0]) == pytest.approx(1.0, abs=1e-5)


def test_a_batch_embeds_only_texts_not_seen_and_returns_the_models_vectors(monkeypatch):
    # A reset re-seeds the persona, and a re-import repeats its lines: what this process
    # embedded before is not run through the model again, and comes back in its place.
    model = MiniLM()
    runs: list[list[str]] = []
    real = model._encode_batch
    monkeypatch.setattr(
        model, "_encode_batch", lambda texts, size: runs.append(list(texts)) or real(texts, size)
    )
    alex, peanuts, new = "Dinner with Alex on Thursday", "I'm allergic to peanuts", "Jordan's day"
    first = model.encode([alex, peanuts, alex])
    second = model.encode([new, peanuts, alex])
    assert runs == [[alex, peanuts], [new]]
    expected = MiniLM().encode([new, peanuts, alex])
    assert np.allclose(second, expected, atol=1e-5)
    # A text said twice in one batch, and again later, gets the same vector each time.
    assert np.array_equal(first[0], first[2]) and np.array_equal(first[0], second[2])
    assert np.array_equal(first[1], second[1])
