"""The seed's LLM gate: one small-model call over the Messages API that answers with JSON.

`should_retrieve` is the seed gate, kept with its exact contract and prompt. `LlmGate` is
the same call with the richer `GateDecision`, its own timeout and stricter parsing. Every
error path ends in `retrieve=True` (fails open).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from assistant.conversation.said import Said
from assistant.gates.base import (
    Conversation,
    GateDecision,
    GateMode,
    Method,
    bounded,
    empty_decision,
    model_call_decision,
)
from assistant.runtime.completion import ModelCallError, ModelError
from assistant.runtime.llm import MessagesApi, json_span

GATE_MAX_TOKENS = 600  # reasoning models spend a thinking block before the JSON
NO_JSON_REASON = "gate returned no JSON — failing open"

GATE_PROMPT = """You are the retrieval gate of a chat assistant that keeps a long-term \
memory of the user (their life, people they know, plans, preferences and history).

Decide whether answering the message below needs a search of that memory.
- false: general knowledge, math, small talk, and self-contained requests that carry \
everything needed to answer.
- true: the message refers to the user's own life, people, plans, preferences or history, \
or to something they told the assistant before.

Reply with ONLY a JSON object, no other text:
{{"retrieve": true or false, "query": "<search query for the memory store, or empty>", \
"reason": "<at most five words>"}}

<message>
{message}
</message>"""


# For small local models (a 1.5B model on a laptop): worked examples and a stricter
# format. The seed's prompt gets sentences, prose and "true" for trivia from them. The
# examples are written for this prompt; the benchmark scores it on messages it never saw.
LOCAL_GATE_PROMPT = """Does answering this message need the assistant's saved notes \
about THIS user?

true: the message is about the user's own life: their friends, family, partner, \
coworkers or pets (often by first name), their plans, appointments, schedule, \
preferences, tastes, past events, or anything they told the assistant before.
false: general knowledge or trivia (even about famous people), math, coding, writing \
or any task fully described in the message, greetings, thanks and small talk.

Examples:
Message: What's the capital of Peru?
{{"retrieve": false, "query": "", "reason": "general knowledge"}}
Message: When is my dentist appointment?
{{"retrieve": true, "query": "dentist appointment", "reason": "user's plans"}}
Message: Write a haiku about autumn leaves.
{{"retrieve": false, "query": "", "reason": "self-contained request"}}
Message: What did Priya say about the wedding?
{{"retrieve": true, "query": "Priya wedding", "reason": "person the user knows"}}
Message: thanks, that helps a lot!
{{"retrieve": false, "query": "", "reason": "small talk"}}
Message: Which restaurant did I like last time?
{{"retrieve": true, "query": "restaurant the user liked", "reason": "user's history"}}
Message: What is 15% of 80?
{{"retrieve": false, "query": "", "reason": "math"}}
Message: Recommend a movie I'd enjoy.
{{"retrieve": true, "query": "movie preferences", "reason": "user's tastes"}}

Reply with ONE line of JSON like the examples and nothing else.
Message: {message}
"""


# Put before the gate's own prompt when the message follows earlier exchanges: the model
# decides with them and writes a query that stands alone ("Mom's birthday", not "her
# birthday"). A first message gets the prompt alone, exactly as before.
CONVERSATION_PREFIX = """Earlier in this conversation (oldest first):
{turns}

The message below may refer to it ("her", "it", "that", "What time?", "and ..."). If it \
does, decide with what it refers to, and write the query so that it stands alone, naming \
what it refers to. If it changes the subject, judge it on its own.

"""
CONTEXT_REPLY_CHARS = 300  # an earlier reply is cut for the gate: its topic is at the start


def conversation_prefix(recent: Sequence[Said]) -> str:
    """The last exchanges as the gate's prompt shows them."""
    lines = []
    for said in recent:
        lines.append(f"User: {bounded(said.user, CONTEXT_REPLY_CHARS)[0]}")
        if said.assistant:
            lines.append(f"Assistant: {bounded(said.assistant, CONTEXT_REPLY_CHARS)[0]}")
    return CONVERSATION_PREFIX.format(turns="\n".join(lines))


class GateReplyError(ValueError):
    """The gate model's text could not be read as a decision."""


def _as_bool(value: Any) -> bool:
    # Models write "false" as often as false; bool("false") would be True.
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("true", "yes", "1"):
            return True
        if word in ("false", "no", "0"):
            return False
    raise GateReplyError(f"retrieve is {value!r}, not a boolean")


def parse_gate_reply(text: str, message: str) -> tuple[bool, str, str]:
    """Read (retrieve, query, reason) from the gate's text; raises GateReplyError.

    The JSON is taken from the first `{` to the last `}`, so ```json fences and
    chatter around the object are ignored.
    """
    span = json_span(text)
    if span is None:
        raise GateReplyError(NO_JSON_REASON)
    try:
        data = json.loads(span)
    except json.JSONDecodeError as exc:
        raise GateReplyError(f"gate error ({type(exc).__name__}) — failing open") from exc
    if not isinstance(data, dict):
        raise GateReplyError(f"gate error ({type(data).__name__} JSON) — failing open")
    if "retrieve" not in data:
        raise GateReplyError("gate JSON has no 'retrieve' — failing open")
    try:
        retrieve = _as_bool(data["retrieve"])
    except GateReplyError as exc:
        raise GateReplyError(f"gate error ({exc}) — failing open") from exc
    query = data.get("query")
    query = query.strip() if isinstance(query, str) else ""
    reason = data.get("reason")
    reason = reason.strip() if isinstance(reason, str) else ""
    return (
        retrieve,
        query or message,
        reason or ("needs memory" if retrieve else "no memory needed"),
    )


class LlmGate:
    """The seed gate: one small-model call that answers with JSON."""

    name = GateMode.LLM.value
    reads_conversation = True  # a follow-up's last exchanges go into its prompt

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        timeout: float | None = 5.0,
        max_retries: int | None = 0,
        clock: Callable[[], float] = time.perf_counter,
        prompt: str = GATE_PROMPT,
    ) -> None:
        # No retries by default: on stage a slow gate is worse than failing open.
        self._api = MessagesApi(
            client, model, max_tokens=GATE_MAX_TOKENS, timeout=timeout, max_retries=max_retries
        )
        self._timeout = timeout
        self._clock = clock
        self._prompt = prompt  # a template with one {message} field; the seed's by default

    def warm(self) -> None:
        """Nothing to load: the model's endpoint is warmed by its own first request."""

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """Ask the small model; any failure retrieves (fails open) and says why.

        With a `conversation` the prompt shows its last exchanges first and asks for a
        standalone query; without, it is the seed's prompt exactly.
        """
        if not message.strip():
            return empty_decision(self.name)
        prompt_message, truncated = bounded(message)
        fallback_query = prompt_message
        started = self._clock()
        tokens = (0, 0)

        def done(retrieve: bool, query: str, reason: str, method: Method) -> GateDecision:
            elapsed_ms = (self._clock() - started) * 1000.0
            return model_call_decision(
                self.name, retrieve, query, reason, method, elapsed_ms, tokens, truncated
            )

        try:
            prompt = self._prompt.format(message=prompt_message)
            if conversation is not None and conversation.said:
                prompt = conversation_prefix(conversation.said) + prompt
            reply = self._api.ask([{"role": "user", "content": prompt}])
            tokens = (reply.input_tokens, reply.output_tokens)
            if reply.cut_off:
                return done(
                    True, fallback_query, "gate reply cut off — failing open", Method.FAILED_OPEN
                )
            retrieve, query, reason = parse_gate_reply(reply.text, fallback_query)
        except GateReplyError as exc:
            return done(True, fallback_query, str(exc), Method.FAILED_OPEN)
        except ModelCallError as err:  # every failure must fail open, by design
            if err.kind is ModelError.TIMEOUT and self._timeout is not None:
                reason = f"gate timed out after {self._timeout:g} s — failing open"
            else:
                reason = f"gate error ({err.cause_name}) — failing open"
            return done(True, fallback_query, reason, Method.FAILED_OPEN)
        except Exception as exc:  # noqa: BLE001 - the seed's contract: anything fails open
            reason = f"gate error ({type(exc).__name__}) — failing open"
            return done(True, fallback_query, reason, Method.FAILED_OPEN)
        return done(retrieve, query, reason, Method.MODEL)


def should_retrieve(client: Any, small_model: str, message: str) -> tuple[bool, str, str]:
    """The seed gate's contract: (retrieve, search query, reason); fails open on any error."""
    decision = LlmGate(client, small_model, timeout=None, max_retries=None).decide(message)
    return decision.retrieve, decision.query, decision.reason
