"""In-process fakes for logic tests: a scripted model client and a list-backed memory search.

`ScriptedModel` stands where the anthropic client stands (`messages.create`,
`messages.stream`, `with_options`), the way simonw/llm's MockModel and pydantic-ai's
TestModel serve their suites: replies are queued or computed from the request, and every
call is recorded. No HTTP, no SDK import. The wire format itself is tested against the
real SDK and the fake server (assistant/runtime/fake_api.py).
"""

from __future__ import annotations

import itertools
import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from memory.records import Added, Memory

Script = Callable[[dict[str, Any]], "str | Exception"]


@dataclass(frozen=True)
class _Block:
    text: str
    type: str = "text"


@dataclass(frozen=True)
class _Usage:
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class _Message:
    """The parts of an SDK Message the code reads."""

    content: list[_Block]
    usage: _Usage
    stop_reason: str = "end_turn"


def prompt_of(request: dict[str, Any]) -> str:
    """The system prompt and every text block of a request, joined, for scripts to match."""
    parts = [str(request.get("system") or "")]
    for message in request.get("messages", []):
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(block.get("text", "") for block in content)
    return "\n".join(parts)


class _Stream:
    def __init__(self, message: _Message) -> None:
        self._message = message

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @property
    def text_stream(self) -> Iterator[str]:
        yield from re.findall(r"\S+\s*", self._message.content[0].text)

    def get_final_message(self) -> _Message:
        return self._message


@dataclass
class ScriptedModel:
    """A fake model client: queued replies first, then `script(request)`, else `default`."""

    script: Script | None = None
    default: str = "OK."
    queued: deque[str | Exception] = field(default_factory=deque)
    calls: list[dict[str, Any]] = field(default_factory=list)

    def queue(self, *replies: str | Exception) -> None:
        """Replies for the next calls, in order; an exception is raised by that call."""
        self.queued.extend(replies)

    @property
    def messages(self) -> ScriptedModel:
        """The SDK's `client.messages`: this object serves create and stream itself."""
        return self

    def with_options(self, **_options: Any) -> ScriptedModel:
        """Retries and timeouts mean nothing in process."""
        return self

    def prompts(self, containing: str) -> list[str]:
        """The prompts of the recorded calls that contain `containing`."""
        return [p for p in map(prompt_of, self.calls) if containing in p]

    def _next(self, request: dict[str, Any]) -> str | Exception:
        self.calls.append(request)
        if self.queued:
            return self.queued.popleft()
        return self.script(request) if self.script is not None else self.default

    @staticmethod
    def _message(text: str, request: dict[str, Any]) -> _Message:
        usage = _Usage(len(prompt_of(request)) // 4, len(text) // 4)
        return _Message([_Block(text)], usage)

    def create(self, **request: Any) -> _Message:
        """One whole reply."""
        reply = self._next(request)
        if isinstance(reply, Exception):
            raise reply
        return self._message(reply, request)

    def stream(self, **request: Any) -> _Stream:
        """A reply in pieces; an exception is raised before the first piece."""
        reply = self._next(request)
        if isinstance(reply, Exception):
            raise reply
        return _Stream(self._message(reply, request))


_ids = itertools.count(1)
_WORD = re.compile(r"[a-z0-9]+")


class ListSearch:
    """A memory store as a list: word-overlap search, exact-text dedupe, and a call log."""

    def __init__(self, texts: tuple[str, ...] = ()) -> None:
        self.memories: list[Memory] = []
        self.searches: list[str] = []
        for text in texts:
            self.remember(text, source="seeded")

    def search(self, query: str, k: int = 5, min_similarity: float | None = None) -> list[Memory]:
        """Memories sharing a word with the query, most shared words first."""
        self.searches.append(query)
        words = set(_WORD.findall(query.lower()))
        scored = []
        for memory in self.memories:
            shared = len(words & set(_WORD.findall(memory.text.lower())))
            if shared:
                scored.append((shared / max(len(words), 1), memory))
        scored.sort(key=lambda pair: -pair[0])
        return [Memory(m.id, m.text, s, m.created_at, m.source) for s, m in scored[:k]]

    def remember(self, text: str, source: str = "typed") -> Added:
        """Add a memory; the same text again is merged."""
        for memory in self.memories:
            if memory.text == text:
                return Added(id=memory.id, merged=True)
        memory = Memory(f"m{next(_ids)}", text, None, "", source)
        self.memories.append(memory)
        return Added(id=memory.id, merged=False)

    def mentions(self, words: list[str], max_share: float = 0.2) -> list[str]:
        """No keyword index: the vocabulary rule finds nothing here."""
        return []

    def count(self) -> int:
        """How many memories there are."""
        return len(self.memories)
