"""Memory recall@k: load memories into a fresh temporary store, ask each question, score hits."""

from __future__ import annotations

from typing import Any


def locomo_memory_text(turn: dict[str, Any], date_time: str, fmt: str = "speaker+caption") -> str:
    """The text a memory system would store for one LoCoMo turn."""
    text = turn["text"]
    if fmt == "plain":
        return text
    out = f"{turn['speaker']}: {text}"
    if "caption" in fmt and turn.get("blip_caption"):
        # The speaker shared a photo; a chat memory keeps what the photo showed.
        out += f" [shared {turn['blip_caption']}]"
    if "date" in fmt:
        out += f" ({date_time})"
    return out
