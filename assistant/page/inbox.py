"""The inbox: messages sent and not yet answered, each taken once, in the order sent.

The chat box in the browser (assistant/page/ui/chat_box.js) sends its state, not an event:
every message it has not yet seen taken, each with a number that only grows. Streamlit
may drop or merge the reruns that carry that state (issue 29: st.chat_input lost 1-2 of
5 messages sent 0.05 s apart on a busy machine); the next rerun still carries every
message, and the inbox takes each number once.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.records import visible

if TYPE_CHECKING:
    from assistant.gates.corrections.actions import Rerun

# The chat box's session-state key: its state is {"sent": [{"id": int, "text": str}, ...]}.
CHAT_BOX_KEY = "chat"


@dataclass(frozen=True)
class Sent:
    """One message as the chat box sent it: its number in this page, and its text."""

    id: int
    text: str
    beat: int | None = None  # a talk's beat, when the Next button sent it


@dataclass(frozen=True)
class Waiting:
    """A message in the inbox; `number` tells two identical messages apart."""

    number: int
    message: str | Rerun
    beat: int | None = None  # the talk's beat this message plays (the Next button)


def sent_messages(sent: object) -> list[Sent]:
    """The well-formed messages of the chat box's `sent` list, by number (others ignored).

    The list comes from the browser: anything that is not `{"id": int, "text": str}` is
    not a message the chat box wrote, and is left out rather than trusted.
    """
    if not isinstance(sent, list):
        return []
    messages = [
        Sent(entry["id"], entry["text"], _beat(entry.get("beat")))
        for entry in sent
        if isinstance(entry, dict)
        and type(entry.get("id")) is int  # not bool, not float
        and isinstance(entry.get("text"), str)
    ]
    return sorted(messages, key=lambda m: m.id)


def _beat(value: object) -> int | None:
    """A beat number from the browser, or None: only a positive int is one."""
    return value if type(value) is int and value > 0 else None


class Inbox:
    """Messages waiting for their answer, oldest first; safe to share between threads.

    Streamlit starts a new script run for each message and lets the run it replaces
    finish its current step, so two runs of one session can touch the inbox at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[Waiting] = []
        self._numbers = itertools.count(1)
        self._taken = 0
        self._last_beat = 0

    @property
    def last_beat(self) -> int:
        """The highest talk beat number taken since the inbox was last cleared."""
        return self._last_beat

    @property
    def taken(self) -> int:
        """The highest chat-box number taken: the chat box may forget messages up to it."""
        return self._taken

    def take(self, sent: object) -> int:
        """Add the chat box's messages numbered above `taken`, in order; how many joined.

        Numbers at or below `taken` were taken by an earlier run: they are skipped, so a
        message is taken once however many reruns carry it. Messages with nothing
        visible in them (empty, or only zero-width characters) are skipped too: the
        model would answer its own prompt.
        """
        joined = 0
        with self._lock:
            for message in sent_messages(sent):
                if message.id <= self._taken:
                    continue
                self._taken = message.id
                if visible(message.text):
                    text = message.text.strip()
                    self._waiting.append(Waiting(next(self._numbers), text, message.beat))
                    self._last_beat = max(self._last_beat, message.beat or 0)
                    joined += 1
        return joined

    def append(self, message: str | Rerun, beat: int | None = None) -> None:
        """Add a message that came some other way: an example button, a corrected re-run,
        a talk's beat (with its number)."""
        with self._lock:
            self._waiting.append(Waiting(next(self._numbers), message, beat))
            self._last_beat = max(self._last_beat, beat or 0)

    def waiting(self) -> list[Waiting]:
        """The messages waiting now, oldest first (a copy)."""
        with self._lock:
            return list(self._waiting)

    def finish(self, item: Waiting, record: Callable[[], None]) -> bool:
        """Record `item`'s answer and remove it, once: False if another run already did."""
        with self._lock:
            if item not in self._waiting:
                return False
            record()
            self._waiting.remove(item)
            return True

    def clear(self) -> None:
        """Forget every waiting message (numbers already taken stay taken), and the beats."""
        with self._lock:
            self._waiting.clear()
            self._last_beat = 0

    def __contains__(self, message: object) -> bool:
        with self._lock:
            return any(w.message == message for w in self._waiting)

    def __len__(self) -> int:
        with self._lock:
            return len(self._waiting)

    def __iter__(self) -> Iterator[str | Rerun]:
        return iter([w.message for w in self.waiting()])
