"""Labelled messages: the gate-eval format, one `{"message", "retrieve", ...}` a line.

Our gate test sets are written in it, and the gate's evaluation (`memory-gate eval gate`)
and the benchmarks read them with `read_rows`; the user's corrections are exported in it
and imported from it (`assistant.gates.corrections.cli`). It lives with the gates, below
both of its readers: the corrections' command line does not import the evaluations.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.jsonl import JsonlError, read_jsonl


class DataError(ValueError):
    """A line of the input file cannot be used."""


@dataclass(frozen=True)
class Row:
    """One labelled message."""

    message: str
    retrieve: bool
    fields: dict[str, Any]


def read_rows(path: Path, split: str | None = None) -> tuple[list[Row], int]:
    """(labelled rows, number of null-label rows skipped); DataError names the bad line."""
    rows: list[Row] = []
    skipped = 0
    try:
        numbered = list(read_jsonl(path))
    except JsonlError as exc:
        raise DataError(str(exc)) from None
    for number, data in numbered:
        message, label = data.get("message"), data.get("retrieve", ...)
        if not isinstance(message, str):
            raise DataError(f"{path}, line {number}: 'message' must be a string")
        if label is ...:
            raise DataError(f"{path}, line {number}: missing 'retrieve'")
        if label is None:
            skipped += 1
            continue
        if not isinstance(label, bool):
            raise DataError(f"{path}, line {number}: 'retrieve' must be true, false or null")
        if split is not None and data.get("split") != split:
            continue
        rows.append(Row(message, label, data))
    return rows, skipped
