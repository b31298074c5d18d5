"""The memory records and their validation: importable without Chroma or numpy."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SOURCES = ("typed", "captured", "seeded", "imported")
# Internal fields live next to user metadata in Chroma under this reserved prefix.
RESERVED = "mg:"

MetadataValue = str | int | float | bool


class MemoryStoreError(ValueError):
    """A request the store cannot honour; the message is meant for a human."""


@dataclass(frozen=True)
class Memory:
    """One stored memory; `similarity` is set by search and None elsewhere."""

    id: str
    text: str
    similarity: float | None
    created_at: str
    source: str
    metadata: dict[str, MetadataValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Added:
    """Result of remember(): the id, and whether an existing memory was updated instead."""

    id: str
    merged: bool


def clean_text(text: object, what: str = "Memory text") -> str:
    """The text stripped, or MemoryStoreError when it is not storable."""
    if not isinstance(text, str):
        raise MemoryStoreError(f"{what} must be a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot be stored by Chroma (or tokenised): say so up front.
        raise MemoryStoreError(f"{what} is not valid Unicode (it holds a lone surrogate)") from None
    cleaned = text.strip()
    if not cleaned:
        raise MemoryStoreError(f"{what} is empty: write the fact to remember.")
    return cleaned


def validate_metadata(metadata: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """Return a copy of `metadata` or raise MemoryStoreError naming the bad key."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise MemoryStoreError(
            f"Metadata must be a mapping of names to values, got {type(metadata).__name__}"
        )
    out: dict[str, MetadataValue] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key.strip():
            raise MemoryStoreError(f"Metadata names must be non-empty strings, got {key!r}")
        if key.startswith(RESERVED):
            raise MemoryStoreError(f"Metadata name {key!r} is reserved (prefix {RESERVED!r}).")
        if not isinstance(value, (str, int, float, bool)):
            raise MemoryStoreError(
                f"Metadata {key!r} has a {type(value).__name__} value; Chroma stores only "
                "str, int, float or bool. Convert it (e.g. json.dumps) first."
            )
        # Chroma silently stores NaN/inf as null: refuse rather than lose the value.
        if isinstance(value, float) and not math.isfinite(value):
            raise MemoryStoreError(f"Metadata {key!r} is {value}; only finite numbers are stored.")
        out[key] = value
    return out


def check_source(source: object) -> str:
    """`source` if it is one of SOURCES, else MemoryStoreError."""
    if source not in SOURCES:
        raise MemoryStoreError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    return str(source)
