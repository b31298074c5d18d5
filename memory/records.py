"""The memory records and their validation: importable without Chroma or numpy."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

SOURCES = ("typed", "captured", "seeded", "imported")
# Internal fields live next to user metadata in Chroma under this reserved prefix.
RESERVED = "mg:"

MetadataValue = str | int | float | bool

# A memory is one fact about the user, not a document. The embedding model reads only the
# first 256 tokens of a text (about 1,000 characters of English): words past that can never
# be found by search, and every retrieved memory is sent with the message to the model.
MAX_MEMORY_CHARS = 1_000
# Characters that draw nothing but are not whitespace to str.strip(): fillers and blanks
# that Unicode classes as letters or symbols. Format characters (Cf: zero-width space,
# joiners, BOM, soft hyphen, tag characters) and marks (M*) are caught by category.
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


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
    # Why the text reads like an instruction to the assistant (memory/injection.py), set
    # when it was written; a flagged memory is never sent to the model.
    flag: str | None = None


@dataclass(frozen=True)
class Added:
    """Result of remember(): the id, and whether an existing memory was updated instead."""

    id: str
    merged: bool
    flag: str | None = None  # set when the text reads like an instruction (kept, withheld)


def is_invisible(char: str) -> bool:
    """True for a character that draws nothing: whitespace, format, mark, control, blank."""
    return char.isspace() or char in _BLANKS or unicodedata.category(char)[0] in "CM"


def visible(text: str) -> bool:
    """True when `text` shows at least one character on screen."""
    return not all(is_invisible(c) for c in text)


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
    if not visible(cleaned):
        raise MemoryStoreError(
            f"{what} holds only invisible characters (such as zero-width spaces): "
            "write the fact to remember."
        )
    if len(cleaned) > MAX_MEMORY_CHARS:
        raise MemoryStoreError(
            f"{what} is {len(cleaned):,} characters; a memory holds at most "
            f"{MAX_MEMORY_CHARS:,}. Search reads only about the first 1,000 characters of a "
            "memory and every memory found is sent to the model, so store one fact per "
            "memory: split longer notes into several."
        )
    return cleaned


def clean_created_at(value: object) -> str:
    """An ISO-8601 creation time as stored (UTC, microseconds), or MemoryStoreError."""
    # Stored times sort as text (list() is newest first), so every one is written in the
    # same form: "yesterday" or "2024-03-01T09:00:00+02:00" stored as given would missort.
    if not isinstance(value, str):
        raise MemoryStoreError(
            f'"created_at" must be an ISO-8601 string such as 2024-03-01T09:30:00Z, '
            f"got {type(value).__name__}"
        )
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise MemoryStoreError(
            f'"created_at" must be an ISO-8601 date or time such as 2024-03-01 or '
            f"2024-03-01T09:30:00Z, got {value!r}"
        ) from None
    if moment.tzinfo is None:  # a time without a zone is taken as UTC
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


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


# Set on a memory that reads like an instruction to the assistant (memory/injection.py).
FLAG = f"{RESERVED}flag"


def iso(ts: float) -> str:
    """A Unix time as the ISO-8601 form the store keeps (UTC, microseconds)."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="microseconds")


def stamps(clock: Callable[[], float]) -> Callable[[], str]:
    """A function that tells `clock`'s time now in the form the store keeps (`iso`)."""
    return lambda: iso(clock())


def to_memory(
    mid: str, doc: str | None, meta: Mapping[str, Any] | None, similarity: float | None = None
) -> Memory:
    """A Memory from a Chroma row: the user's metadata apart from the store's own fields."""
    meta = dict(meta or {})
    # Sorted: Chroma does not keep key order, and exports should be byte-for-byte stable.
    user = {k: meta[k] for k in sorted(meta) if not k.startswith(RESERVED)}
    return Memory(
        id=mid,
        text=doc or "",
        similarity=similarity,
        created_at=str(meta.get(f"{RESERVED}created_at", "")),
        source=str(meta.get(f"{RESERVED}source", "typed")),
        metadata=user,
        flag=str(meta.get(FLAG) or "") or None,
    )
