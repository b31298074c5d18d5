"""Whether a message leans on the exchanges before it, and what it reads as joined to them.

A message leans when it points back with an English third-person pronoun or a deictic
("her", "it", "there", "then"), opens by carrying on ("and …", "what about …"), or is a
short question with no verb of its own ("what time?", "which doctor?"). Nothing else is
read: no names, roles, kin or words of another language, so it holds for any user's notes.

A message that leans continues the newest of the last three exchanges that searched memory
("what time again?" after an aside still means the dinner), or else the last one. Its query
is the message joined after that exchange, as Zep and LangChain's concatenation read a
follow-up. A message that does not lean is its own query: "Plan my weekend" is searched as
itself. Either way, after a turn the message is also read joined after each of the last
exchanges, and the search fuses every reading (assistant/conversation/search.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.conversation.said import RECENT_TURNS, Said
from assistant.text import is_question, words

_POINTERS = frozenset(
    "he him his she her hers it its they them their theirs that this those these there then".split()
)
_CARRIES_ON = re.compile(r"^\W*(?:and|but|so|or|also|plus|what about|how about)\b", re.IGNORECASE)
# A verb of its own makes a short question stand alone: "What's 2+2?", "who is Noor?".
_VERBS = frozenset(
    """is are was were am be been do does did can could will would should shall may might must
    have has had whats whos wheres whens hows im""".split()
)
_CONTRACTED = re.compile(r"[^\W\d_]['’](?:s|re|m|ve|ll|d)\b", re.IGNORECASE)
FRAGMENT_WORDS = 4
# A chain of follow-ups carries the words before it; a reading keeps the last this many.
READING_WORDS = 60


def leans(message: str) -> bool:
    """True when a message cannot be read alone: it points back, carries on, or is a fragment."""
    said = {w.casefold() for w in words(message)}
    if not said:
        return False
    if _CARRIES_ON.match(message) or said & _POINTERS:
        return True
    fragment = len(words(message)) <= FRAGMENT_WORDS and not (said & _VERBS)
    return fragment and not _CONTRACTED.search(message) and is_question(message)


def joined(earlier: str, message: str) -> str:
    """The message after an earlier text, as one reading, at most `READING_WORDS` words."""
    return " ".join(f"{earlier.strip()} {message.strip()}".split()[-READING_WORDS:])


@dataclass(frozen=True)
class Reading:
    """A message read with the conversation: the exchange it continues, and its readings."""

    message: str
    query: str  # what it is searched as: the message, or joined after the exchange it continues
    back: int = 0  # 0: it stands alone; 1: it continues the last exchange; 2: the one before
    continued: Said | None = None
    others: tuple[str, ...] = ()  # the other readings it is searched as too

    @property
    def follow_up(self) -> bool:
        """True when the message continues an earlier exchange."""
        return self.back > 0

    @property
    def source(self) -> str:
        """Where the query came from, as the badge says it."""
        if not self.follow_up:
            return ""
        return "from your last message" if self.back == 1 else "from earlier in this chat"


def read(message: str, said: Sequence[Said]) -> Reading:
    """The message read with the last exchanges (oldest first)."""
    recent = list(said)[-RECENT_TURNS:]
    if not recent:
        return Reading(message, query=message)
    if not leans(message):
        # Searched as itself; what the conversation was on only fills in behind it.
        after = (joined(s.query or s.user, message) for s in reversed(recent))
        return Reading(message, query=message, others=tuple(dict.fromkeys(after)))
    back = next((i for i, s in enumerate(reversed(recent), 1) if s.query), 1)
    continued = recent[-back]
    # A searched exchange's query already holds what it continued ("callum's guitar … is it
    # still tuesdays?"), so a chain of follow-ups keeps its subject.
    query = joined(continued.query or continued.user, message)
    # Not the message alone: it leans, so alone it reads as something else ("What time?"
    # alone finds the bedtime note). Over 84 held-out sets it gave no answer that the
    # joined readings missed (docs/followups.md).
    others = (joined(s.query or s.user, message) for s in reversed(recent))
    return Reading(
        message, query, back, continued, tuple(dict.fromkeys(o for o in others if o != query))
    )
