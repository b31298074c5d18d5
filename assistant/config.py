"""Settings, read from the environment in one place, and the gate modes they name.

A leaf: of the project it imports only `assistant.text` (the `Label` enum) and where the
store is (`memory.settings`). `GateMode` lives here, not with the gates: it is the value of
MEMGATE_GATE_MODE, and every layer above reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from assistant.text import Label
from memory.settings import SettingsError, StoreSettings
from memory.settings import cache_home as cache_home  # re-exported: assistant.runtime.model_file
from memory.settings import env_float as _float

# Current, non-deprecated model ids (checked against anthropic/_data/deprecated_models.py).
DEFAULT_GATE_MODEL = "claude-haiku-5-5"
DEFAULT_CHAT_MODEL = "claude-sonnet-5-5"
LOCAL_MODEL_OFF = "off"
# The built-in model's reply temperature (docs/answers.md, "Sampling"): a presenter wants
# the right answer every time. Other endpoints keep their own default.
BUILT_IN_TEMPERATURE = 0.0


class GateMode(Label):
    """A way of deciding whether a message needs memory; the value is MEMGATE_GATE_MODE's."""

    LLM = "llm"
    LOCAL = "local"
    CASCADE = "cascade"
    ALWAYS = "always"
    NEVER = "never"
    LENGTH = "length"

    @property
    def summary(self) -> str:
        """One line for help texts."""
        return _SUMMARIES[self]

    @property
    def needs_model(self) -> bool:
        """True when the mode calls the LLM through the anthropic client."""
        return self in (GateMode.LLM, GateMode.CASCADE)

    @property
    def judges(self) -> bool:
        """True when the mode judges the message: corrections apply to it, and a follow-up
        is read with the conversation. The rule modes (always, never, length) stand for
        products that read the message alone, and a presenter picks them as a fixed
        baseline that nothing may bend."""
        return self in (GateMode.LLM, GateMode.LOCAL, GateMode.CASCADE)


_SUMMARIES = {
    GateMode.LLM: "the small model decides (the seed gate)",
    GateMode.LOCAL: "an offline classifier on MiniLM embeddings, a few ms",
    GateMode.CASCADE: "local first; the LLM only when local is unsure",
    GateMode.ALWAYS: "retrieve every turn, like mem0 / Zep",
    GateMode.NEVER: "no memory",
    GateMode.LENGTH: "skip messages of 30 characters or fewer",
}


def _temperature(env: Mapping[str, str]) -> str:
    raw = env.get("MEMGATE_TEMPERATURE", "").strip().lower()
    if raw in ("", "default"):
        return raw
    _float(env, "MEMGATE_TEMPERATURE", 0.0, 0.0, 2.0)  # raises with a clear message
    return raw


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, got {raw!r}")


@dataclass(frozen=True)
class Settings:
    """Everything configurable. Build with `Settings.from_env()`."""

    api_key: str | None = None
    base_url: str | None = None
    gate_model: str = DEFAULT_GATE_MODEL
    chat_model: str = DEFAULT_CHAT_MODEL
    gate_timeout: float = 5.0
    chat_timeout: float = 60.0
    gate_mode: GateMode = GateMode.LOCAL
    memory_dir: Path = Path(".memory-gate")
    chroma_host: str | None = None
    chroma_port: int = 8000
    user_id: str = "demo"
    min_similarity: float | None = None  # None: the store's measured default
    capture: bool = True
    # "" = the default GGUF (assembled from its registry parts), a path to any GGUF, or "off".
    local_model: str = ""
    model_cache_dir: Path | None = None  # None: ~/.cache/memory-gate/models
    cache_home: Path = Path.home() / ".cache"  # $XDG_CACHE_HOME
    # Set when this process runs its own llama.cpp server: its native API (grammar,
    # token probabilities) is then used for the LLM gate. Never read from the environment.
    native_url: str | None = None
    # The external evaluation data (benchmarks); None: ../shared/eval beside the checkout.
    eval_dir: Path | None = None
    # MEMGATE_TEMPERATURE as given: "" (unset), "default" (the endpoint's own), or a number.
    temperature: str = ""
    # MEMGATE_TALK: a talk file the app starts with loaded (`memory-gate demo --talk FILE`).
    talk_file: Path | None = None

    @property
    def reply_temperature(self) -> float | None:
        """The replies' sampling temperature; None: the endpoint's own default."""
        if self.temperature == "default":
            return None
        if self.temperature:
            return float(self.temperature)
        return BUILT_IN_TEMPERATURE if self.wants_local_model else None

    @property
    def model_configured(self) -> bool:
        """True when replies can come from a model (a key, or a local keyless endpoint)."""
        return bool(self.api_key or self.base_url)

    @property
    def wants_local_model(self) -> bool:
        """True when the app should start its own llama.cpp server: no key, no endpoint."""
        return not self.model_configured and self.local_model.lower() != LOCAL_MODEL_OFF

    @property
    def endpoint_host(self) -> str:
        """The host the model calls go to, for display; never includes credentials."""
        if not self.model_configured:
            return "offline"
        from urllib.parse import urlsplit

        if not self.base_url:
            return "api.anthropic.com"
        return urlsplit(self.base_url).hostname or self.base_url

    @property
    def store(self) -> StoreSettings:
        """Where the memory store is: the part of these settings the memory/ package reads."""
        return StoreSettings(
            memory_dir=self.memory_dir,
            user_id=self.user_id,
            chroma_host=self.chroma_host,
            chroma_port=self.chroma_port,
            min_similarity=self.min_similarity,
            cache_home=self.cache_home,
        )

    def with_(self, **changes: object) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def __repr__(self) -> str:
        # The key must never reach a log line or an exception message.
        key = "set" if self.api_key else "unset"
        return (
            f"Settings(api_key=<{key}>, base_url={self.base_url!r}, "
            f"gate_model={self.gate_model!r}, chat_model={self.chat_model!r}, "
            f"gate_mode={str(self.gate_mode)!r}, local_model={self.local_model!r}, "
            f"memory_dir={str(self.memory_dir)!r}, user_id={self.user_id!r})"
        )

    __str__ = __repr__

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read settings from `env` (default: os.environ); a missing key is fine."""
        env = os.environ if env is None else env
        api_key = env.get("ANTHROPIC_API_KEY", "").strip() or None
        base_url = env.get("ANTHROPIC_BASE_URL", "").strip() or None
        # Only a real key makes the LLM gate the default. A keyless endpoint is a local
        # model, and a small local model is a worse, slower gate than the local classifier
        # (README, "Gate modes"), so it gets the same default as no model at all.
        raw_mode = env.get("MEMGATE_GATE_MODE", "").strip().lower()
        try:
            gate_mode = GateMode(raw_mode or (GateMode.LLM if api_key else GateMode.LOCAL))
        except ValueError:
            raise SettingsError(f"MEMGATE_GATE_MODE must be one of {', '.join(GateMode)}") from None
        store = StoreSettings.from_env(env)  # the memory CLI reads these the same way
        return cls(
            api_key=api_key,
            base_url=base_url,
            gate_model=env.get("MEMGATE_GATE_MODEL", "").strip() or DEFAULT_GATE_MODEL,
            chat_model=env.get("MEMGATE_CHAT_MODEL", "").strip() or DEFAULT_CHAT_MODEL,
            gate_timeout=_float(env, "MEMGATE_GATE_TIMEOUT", 5.0, 0.1, 120.0),
            chat_timeout=_float(env, "MEMGATE_CHAT_TIMEOUT", 60.0, 1.0, 600.0),
            gate_mode=gate_mode,
            memory_dir=store.memory_dir,
            chroma_host=store.chroma_host,
            chroma_port=store.chroma_port,
            user_id=store.user_id,
            min_similarity=store.min_similarity,
            capture=_bool(env, "MEMGATE_CAPTURE", True),
            local_model=env.get("MEMGATE_LOCAL_MODEL", "").strip(),
            model_cache_dir=Path(cache)
            if (cache := env.get("MEMGATE_MODEL_CACHE", "").strip())
            else None,
            eval_dir=Path(data) if (data := env.get("MEMGATE_EVAL_DIR", "").strip()) else None,
            cache_home=store.cache_home,
            temperature=_temperature(env),
            talk_file=Path(talk) if (talk := env.get("MEMGATE_TALK", "").strip()) else None,
        )
