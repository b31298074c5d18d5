"""Settings, read from the environment in one place.

A leaf: it imports nothing from the project but the gate modes' names (a leaf too).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from assistant.gates.base import GateMode

# Current, non-deprecated model ids (checked against anthropic/_data/deprecated_models.py).
DEFAULT_GATE_MODEL = "claude-haiku-5-5"
DEFAULT_CHAT_MODEL = "claude-sonnet-5-5"
LOCAL_MODEL_OFF = "off"
# The built-in model's reply temperature, chosen from `eval answers --temperature` runs on
# our follow-up and single-question dev sets (docs/answers.md, "Sampling"): a presenter
# wants the right answer every time. Other endpoints keep their own default.
BUILT_IN_TEMPERATURE = 0.0


class SettingsError(ValueError):
    """An environment variable holds a value we cannot use."""


def _float(env: Mapping[str, str], name: str, default: float, lo: float, hi: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None
    if not lo <= value <= hi:
        raise SettingsError(f"{name} must be between {lo} and {hi}, got {value}")
    return value


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


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's cache folder: $XDG_CACHE_HOME, else ~/.cache."""
    env = os.environ if env is None else env
    return Path(env.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache")


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
        port_raw = env.get("MEMGATE_CHROMA_PORT", "8000").strip() or "8000"
        if not port_raw.isdigit() or not 0 < int(port_raw) < 65536:
            raise SettingsError(f"MEMGATE_CHROMA_PORT must be a port number, got {port_raw!r}")
        min_sim_raw = env.get("MEMGATE_MIN_SIMILARITY", "").strip()
        return cls(
            api_key=api_key,
            base_url=base_url,
            gate_model=env.get("MEMGATE_GATE_MODEL", "").strip() or DEFAULT_GATE_MODEL,
            chat_model=env.get("MEMGATE_CHAT_MODEL", "").strip() or DEFAULT_CHAT_MODEL,
            gate_timeout=_float(env, "MEMGATE_GATE_TIMEOUT", 5.0, 0.1, 120.0),
            chat_timeout=_float(env, "MEMGATE_CHAT_TIMEOUT", 60.0, 1.0, 600.0),
            gate_mode=gate_mode,
            memory_dir=Path(env.get("MEMGATE_MEMORY_DIR", "").strip() or ".memory-gate"),
            chroma_host=env.get("MEMGATE_CHROMA_HOST", "").strip() or None,
            chroma_port=int(port_raw),
            user_id=env.get("MEMGATE_USER", "").strip() or "demo",
            min_similarity=(
                _float(env, "MEMGATE_MIN_SIMILARITY", 0.0, -1.0, 1.0) if min_sim_raw else None
            ),
            capture=_bool(env, "MEMGATE_CAPTURE", True),
            local_model=env.get("MEMGATE_LOCAL_MODEL", "").strip(),
            model_cache_dir=Path(cache)
            if (cache := env.get("MEMGATE_MODEL_CACHE", "").strip())
            else None,
            eval_dir=Path(data) if (data := env.get("MEMGATE_EVAL_DIR", "").strip()) else None,
            cache_home=cache_home(env),
            temperature=_temperature(env),
        )
