"""The one JSONL reader: one JSON object a line, blank lines skipped, a bad line named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class JsonlError(ValueError):
    """A line of a JSONL file is not a JSON object; the message names the file and line."""


def read_jsonl(path: Path | str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of the file."""
    # Bytes, decoded a line at a time: a stray Latin-1 byte is reported with its line
    # number instead of a UnicodeDecodeError that names only a byte offset.
    with Path(path).open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise JsonlError(
                    f"{path}, line {number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                    f"column {exc.start + 1}); save the file as UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JsonlError(f"{path}, line {number}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise JsonlError(f"{path}, line {number}: expected a JSON object")
            yield number, row
