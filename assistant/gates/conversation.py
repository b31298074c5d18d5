"""The chain's last step: the gate's decision read again with the conversation.

The resolver (assistant/followup.py) says whether a message leans on the last exchanges
and what it means standing alone; this step decides what that changes about the decision.
"""

from __future__ import annotations

from dataclasses import replace

from assistant.followup import Resolved
from assistant.gates.base import GateDecision, Method, Said

FOLLOW_UP_REASON = "follows up on your memories"


def in_conversation(
    decision: GateDecision, resolved: Resolved, continued: Said | None, keep_query: bool = False
) -> GateDecision:
    """The gate's decision on the message alone, read again with the conversation.

    - A follow-up of an exchange that searched memory searches too, with the resolved
      query: "What time?" after "When am I meeting Alex?" needs the same memory.
    - Any retrieving follow-up searches with the resolved query.
    - A skipped follow-up of a general exchange stays skipped: "and cubed?" after "what's
      12 squared" is as general as the question it continues ("Now one about my cat",
      after a joke, is retrieved by the gate on its own words).
    A correction's or an empty message's decision is the user's or final: only the query
    of a retrieving one is resolved. `keep_query`: the gate read the conversation itself
    (the `llm` gate), and the standalone query its model wrote stands.
    """
    if not resolved.follow_up or continued is None or decision.method is Method.EMPTY_INPUT:
        return decision
    if decision.retrieve:
        own = keep_query and decision.method is Method.MODEL and bool(decision.query)
        return replace(
            decision, query=decision.query if own else resolved.query, query_source=resolved.source
        )
    if decision.method is Method.CORRECTION or not continued.query:
        return decision
    return replace(
        decision,
        retrieve=True,
        query=resolved.query,
        reason=FOLLOW_UP_REASON,
        method=Method.CONVERSATION,
        query_source=resolved.source,
    )
