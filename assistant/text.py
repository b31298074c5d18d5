"""Small text helpers shared by the UI and the messages it shows."""

from __future__ import annotations

from enum import Enum


def end_sentence(text: str) -> str:
    """`text` ending in one full stop: a message built from another one must not end in '..'."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."


class Label(str, Enum):
    """An Enum of states that reads as its value in text, as the plain string it replaced."""

    def __str__(self) -> str:
        return str(self.value)
