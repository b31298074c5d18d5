"""The gate's decision read again with the exchange a follow-up continues.

- A follow-up of an exchange on the user's memories searches too, as its reading: "What
  time?" after "When am I meeting Alex?" needs the same memory, whatever the gate made of
  "What time?" alone; unless it names things of its own and the gate read it as plainly
  general (`asks_the_world`).
- A follow-up of a general exchange was judged by the gate on its reading (the chain asks
  it so: assistant/gates/registry.py): "and in the UK?" after the tallest mountain in
  Ireland is as general as it, and "now one about my cat" after a joke is not.
- Any retrieving follow-up searches as its reading, unless the gate read the conversation
  itself (the `llm` gate) and wrote its own standalone query: one rewriter, not two.

A correction's or an empty message's decision is the user's or final: only the query of a
retrieving one is read with the conversation.
"""

from __future__ import annotations

from dataclasses import replace

from assistant.conversation.reading import Reading
from assistant.gates.base import GateDecision, Method
from assistant.text import content_words

FOLLOW_UP_REASON = "follows up on your memories"
# Below this the local gate reads a message alone as plainly general: "what time zone is
# that city in?" after the Orlando trip (p=0.01), against "whats the code for his key
# safe" (p=0.011) that names too little of its own to tell (docs/followups.md).
PLAINLY_GENERAL = 0.05


def asks_the_world(decision: GateDecision, message: str) -> bool:
    """True for a follow-up that names things of its own, which the gate read as plainly
    general: it asks the world about what was said ("that city is the capital of which
    state?"), not the user's memories. A bare "what time?" names nothing and carries on."""
    p = decision.confidence
    if decision.method is not Method.LOCAL or p is None or p >= PLAINLY_GENERAL:
        return False
    return len(content_words(message)) >= 2


def in_conversation(
    decision: GateDecision, reading: Reading, keep_query: bool = False
) -> GateDecision:
    """The decision on a message, read again with the exchange it continues."""
    if not reading.follow_up or reading.continued is None:
        return decision
    if decision.method is Method.EMPTY_INPUT:
        return decision
    if decision.retrieve:
        own = keep_query and decision.method is Method.MODEL and bool(decision.query)
        query = decision.query if own else reading.query
        return replace(decision, query=query, query_source=reading.source)
    if decision.method is Method.CORRECTION or not reading.continued.query:
        return decision
    if asks_the_world(decision, reading.message):
        return decision
    return replace(
        decision,
        retrieve=True,
        query=reading.query,
        reason=FOLLOW_UP_REASON,
        method=Method.CONVERSATION,
        query_source=reading.source,
    )
