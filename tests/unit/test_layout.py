"""The README's layout section matches the tree: assistant/ and memory/, module by module.

Every entry the layout lists under a package exists, every module and package there is
named in its entry or its package's lines, and nothing at the top of assistant/ is left
out: a module moved or added without its line in the README fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {"__init__.py", "__pycache__"}


def _layout() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1]
    return section.split("```", 2)[1].splitlines()


def _block(lines: list[str], name: str, indent: int) -> list[str]:
    """The lines of `name`'s entry and of everything listed under it."""
    head = " " * indent + name
    start = next(i for i, line in enumerate(lines) if line == head or line.startswith(head + " "))
    end = start + 1
    while end < len(lines) and (
        lines[end].startswith(" " * (indent + 1)) or not lines[end].strip()
    ):
        end += 1
    return lines[start:end]


def _entries(block: list[str], indent: int) -> set[str]:
    """The names that start a line at `indent` ("inbox.py, ui/" is two)."""
    found = set()
    for line in block:
        if line.startswith(" " * indent) and not line.startswith(" " * (indent + 1)):
            first = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            found |= {n.strip() for n in first.split(",")}
    return found


def _children(folder: Path) -> set[str]:
    return {
        p.name + ("/" if p.is_dir() else "")
        for p in folder.iterdir()
        if p.name not in SKIPPED and (p.is_dir() or p.suffix == ".py")
    }


def test_the_top_of_assistant_is_listed_entry_by_entry() -> None:
    block = _block(_layout(), "assistant/", 0)
    assert _entries(block, 2) == _children(ROOT / "assistant")


@pytest.mark.parametrize(
    "folder",
    [
        "assistant/runtime",
        "assistant/conversation",
        "assistant/gates",
        "assistant/reply",
        "assistant/turn",
        "assistant/page",
        "assistant/eval",
        "memory",
    ],
)
def test_every_module_of_a_package_is_named_and_every_entry_exists(folder: str) -> None:
    *parents, name = folder.split("/")
    lines = _block(_layout(), parents[0] + "/", 0) if parents else _layout()
    block = _block(lines, name + "/", 2 * len(parents))
    text = " ".join(block)
    children = _children(ROOT / folder) - {"data/"}
    unnamed = {c for c in children if not re.search(rf"(?<![\w/]){re.escape(c)}", text)}
    assert not unnamed, f"{folder}: not in the README's layout: {sorted(unnamed)}"
    listed = _entries(block, 2 * len(parents) + 2)
    missing = {e for e in listed if not (ROOT / folder / e.rstrip("/")).exists()}
    assert not missing, f"{folder}: the README lists what is not there: {sorted(missing)}"
