"""`Said`: one earlier exchange, as the gates and the conversation mechanism read it.

A leaf: a gate's contract (assistant/gates/base.py) holds these, and nothing here imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

# As memU's pre-retrieval decision reads: the last three exchanges.
RECENT_TURNS = 3


@dataclass(frozen=True)
class Said:
    """One earlier exchange: the user's words, the reply, its query and memories."""

    user: str
    assistant: str = ""
    query: str = ""  # what that turn searched memory for; "" when it skipped
    memories: tuple[str, ...] = ()  # the memory texts that turn was answered with
