"""Files in and out of the store: an import read and checked, an export written safely."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from memory.records import (
    SOURCES,
    Memory,
    MemoryStoreError,
    clean_created_at,
    clean_text,
    validate_metadata,
)

EXPORT_FIELDS = ("id", "text", "created_at", "source", "metadata")


def read_import(path: Path) -> list[Memory]:
    """Parse and validate a JSONL export; raises MemoryStoreError naming the bad line.

    A row without an id gets an empty one: the store gives it the id of its text.
    """
    from memory.jsonl import JsonlError, read_jsonl

    records = []
    seen: set[str] = set()
    try:
        numbered = list(read_jsonl(path))
    except JsonlError as exc:
        raise MemoryStoreError(str(exc)) from None
    for n, row in numbered:
        try:
            text = clean_text(row.get("text"), '"text"')
            mid = row.get("id")
            if mid is not None and (not isinstance(mid, str) or not mid.strip()):
                raise MemoryStoreError('"id" must be a non-empty string')
            source = row.get("source", "imported")
            if source not in SOURCES:
                raise MemoryStoreError(f'"source" must be one of {", ".join(SOURCES)}')
            created = row.get("created_at")
            created = "" if created in (None, "") else clean_created_at(created)
            meta = validate_metadata(row.get("metadata") or {})
        except MemoryStoreError as exc:
            raise MemoryStoreError(f"{path}, line {n}: {exc}") from None
        if mid is not None:
            if mid in seen:
                raise MemoryStoreError(f"{path}, line {n}: id {mid!r} appears twice")
            seen.add(mid)
        records.append(Memory(mid or "", text, None, created, source, meta))
    return records


def export_target(raw: str, folder: Path | None, force: bool) -> Path:
    """Where an export may be written; MemoryStoreError when that would destroy something."""
    target = Path(raw).expanduser()
    resolved = target.resolve()
    if folder is not None and resolved.is_relative_to(folder.resolve()):
        raise MemoryStoreError(
            f"{raw} is inside the memory folder {folder}: writing there would overwrite or "
            "corrupt the store. Export to a file outside it."
        )
    if resolved.is_dir():
        raise MemoryStoreError(f"{raw} is a directory: give a file name, e.g. {raw}/memories.jsonl")
    if resolved.exists() and not force:
        raise MemoryStoreError(f"{raw} exists: nothing was written. Add --force to replace it.")
    if not resolved.parent.is_dir():
        raise MemoryStoreError(f"the folder {resolved.parent} does not exist")
    return resolved


def write_atomically(target: Path, text: str, force: bool) -> None:
    """Write a temporary file beside `target`, then rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if force:
            os.replace(tmp, target)
        else:
            # A hard link creates `target` only if nothing is there, even if a file
            # appeared since we looked: an export never replaces a file it was not told to.
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise MemoryStoreError(
                    f"{target} exists: nothing was written. Add --force to replace it."
                ) from None
            os.unlink(tmp)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
