"""Where the memory store is, read from the MEMGATE_* environment in one place.

The app (assistant/config.py) and the memory CLI (python -m memory) both read the store's
variables here, so they agree on names and defaults, and memory/ needs nothing from
assistant/ to find its own store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # memory.store loads Chroma: only when a store is opened
    from memory.store import MemoryStore

DEFAULT_MEMORY_DIR = Path(".memory-gate")
DEFAULT_USER = "demo"
DEFAULT_CHROMA_PORT = 8000


class SettingsError(ValueError):
    """An environment variable holds a value we cannot use."""


def env_float(env: Mapping[str, str], name: str, default: float, lo: float, hi: float) -> float:
    """The number in `env[name]` (default when unset), refused outside [lo, hi]."""
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


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's cache folder: $XDG_CACHE_HOME, else ~/.cache."""
    env = os.environ if env is None else env
    return Path(env.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache")


@dataclass(frozen=True)
class StoreSettings:
    """The store's folder or server, whose memories, and its relevance cut-off."""

    memory_dir: Path = DEFAULT_MEMORY_DIR
    user_id: str = DEFAULT_USER
    chroma_host: str | None = None  # set: a Chroma server instead of the folder
    chroma_port: int = DEFAULT_CHROMA_PORT
    min_similarity: float | None = None  # None: the store's measured default
    cache_home: Path = Path.home() / ".cache"  # $XDG_CACHE_HOME

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> StoreSettings:
        """MEMGATE_MEMORY_DIR, MEMGATE_USER, MEMGATE_CHROMA_HOST / _PORT,
        MEMGATE_MIN_SIMILARITY and XDG_CACHE_HOME from `env` (default: os.environ)."""
        env = os.environ if env is None else env
        port_raw = env.get("MEMGATE_CHROMA_PORT", "").strip() or str(DEFAULT_CHROMA_PORT)
        if not port_raw.isdigit() or not 0 < int(port_raw) < 65536:
            raise SettingsError(f"MEMGATE_CHROMA_PORT must be a port number, got {port_raw!r}")
        min_sim_raw = env.get("MEMGATE_MIN_SIMILARITY", "").strip()
        return cls(
            memory_dir=Path(env.get("MEMGATE_MEMORY_DIR", "").strip() or DEFAULT_MEMORY_DIR),
            user_id=env.get("MEMGATE_USER", "").strip() or DEFAULT_USER,
            chroma_host=env.get("MEMGATE_CHROMA_HOST", "").strip() or None,
            chroma_port=int(port_raw),
            min_similarity=(
                env_float(env, "MEMGATE_MIN_SIMILARITY", 0.0, -1.0, 1.0) if min_sim_raw else None
            ),
            cache_home=cache_home(env),
        )

    def overridden(
        self,
        *,
        memory_dir: Path | str | None = None,
        user_id: str | None = None,
        host: str | None = None,
        port: int | None = None,
    ) -> StoreSettings:
        """These settings with the given options in place (the CLI's --dir/--user/--host/--port).

        A folder given without a host means that folder, even when the environment names a
        server.
        """
        chroma_host = host or (None if memory_dir is not None else self.chroma_host)
        return replace(
            self,
            memory_dir=Path(memory_dir) if memory_dir is not None else self.memory_dir,
            user_id=user_id or self.user_id,
            chroma_host=chroma_host,
            chroma_port=port or self.chroma_port,
        )

    def open(self) -> MemoryStore:
        """The store these settings describe: a Chroma server when chroma_host is set."""
        from memory.store import MemoryStore

        return MemoryStore.open(
            self.memory_dir,
            self.user_id,
            host=self.chroma_host,
            port=self.chroma_port,
            min_similarity=self.min_similarity,
            cache_dir=self.cache_home / "memory-gate",  # a server's keyword index is saved here
        )
