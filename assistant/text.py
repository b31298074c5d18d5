"""Small text helpers shared by the UI and the messages it shows."""

from __future__ import annotations


def end_sentence(text: str) -> str:
    """`text` ending in one full stop: a message built from another one must not end in '..'."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."
