"""What the local gate reads: the message bounded and unwrapped, and the search query it writes."""

from __future__ import annotations

import re

from assistant.gates.base import bounded

CODE = re.compile(
    r"(\bdef |\breturn\b|\bimport |\bprint\(|;\s*$|[{}]|==|\bSELECT\b|\bFROM\b|=>|\(\)|"
    r"\w+\(\w*\)|Error\b|```)",
    re.MULTILINE,
)
_WRAPPING_QUOTES = re.compile(r'^\s*["“\'](.*)["”\']\s*$', re.DOTALL)


def unwrap(message: str) -> str:
    """The message without quotes wrapped around all of it (a pasted question)."""
    match = _WRAPPING_QUOTES.match(message)
    return match.group(1).strip() if match else message.strip()


def gate_text(message: str) -> str:
    """What the local gate reads: the bounded message, without wrapping quotes."""
    return unwrap(bounded(message)[0])


def carries_material(text: str) -> bool:
    """True when the message brings its own material: pasted lines or code."""
    return "\n" in text.strip() or len(CODE.findall(text)) >= 2


_FILLER = re.compile(
    r"^\s*(?:(?:hey|hi|hello|ok|okay|so|um|uh|oh|well|quick question)\b[,!.\s]*)*"
    r"(?:(?:can|could|would) you (?:please )?(?:remind me|tell me|check|look up)?\s*|"
    r"(?:please )?remind me\s*|do you (?:remember|recall)\s*|tell me\s*)?",
    re.IGNORECASE,
)
_TRAILING_FILLER = re.compile(r"(?:,?\s*(?:again|please|by the way|btw))+\s*([?.!]*)\s*$", re.I)


def memory_query(message: str) -> str:
    """The message with leading/trailing filler removed, for the memory search."""
    query = _FILLER.sub("", message.strip(), count=1)
    query = _TRAILING_FILLER.sub(r"\1", query).strip(" ,")
    return query if len(query) >= 3 else message.strip()
