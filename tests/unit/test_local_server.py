"""The evaluations' and benchmarks' one way to start, wait for and stop the local model."""

from __future__ import annotations

import pytest

from assistant.config import Settings
from assistant.eval.local_server import ModelNotReady, attach
from assistant.runtime.local_model import ModelState, ModelStatus


class FakeLocal:
    """A LocalModel that is ready (or failed) at once and counts its stops."""

    def __init__(self, status: ModelStatus) -> None:
        self.status = status
        self.stops = 0

    def wait_ready(self, timeout: float | None = None) -> ModelStatus:
        return self.status

    def stop(self) -> None:
        self.stops += 1


def test_a_ready_model_is_stopped_when_the_run_ends_even_by_an_error():
    local = FakeLocal(ModelStatus(ModelState.READY, name="Tiny"))
    model = attach(local, Settings())  # type: ignore[arg-type]
    assert model is not None and model.name == "Tiny" and model.ready_s >= 0
    with pytest.raises(ValueError), model:
        raise ValueError("the benchmark broke")
    assert local.stops == 1


def test_a_model_that_failed_is_stopped_and_says_why():
    local = FakeLocal(ModelStatus(ModelState.FAILED, error="no GGUF"))
    with pytest.raises(ModelNotReady, match="no GGUF"):
        attach(local, Settings())  # type: ignore[arg-type]
    assert local.stops == 1


def test_no_server_to_wait_for_is_none():
    assert attach(None, Settings()) is None
