"""The LLM gate on our own llama.cpp server: its native `/completion`, the reply constrained.

The same question as the seed's gate (gates/llm.py), asked only of the server this process
runs: a GBNF grammar forces the gate's JSON (or, in the "yes-no" style, one true/false
token), `n_probs` gives P(retrieve) as the decision's confidence, and a measured logit bias
sets the threshold. Why, and what it measured: docs/llm-gate.md, "The native gate".
Every failure fails open (retrieves), as the seed does.
"""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from assistant.gates.base import (
    Conversation,
    GateDecision,
    GateMode,
    Method,
    bounded,
    empty_decision,
    model_call_decision,
)
from assistant.gates.llm import GateReplyError, parse_gate_reply
from assistant.gates.local.text import memory_query
from assistant.gates.trust import logit

QUERY_CHARS = 48
# Reasons the grammar allows: short enough for the badge, and each fits its decision.
YES_REASONS = (
    "user's plans",
    "someone the user knows",
    "user's history",
    "user's tastes",
    "user's life",
    "earlier conversation",
)
NO_REASONS = ("general knowledge", "math", "coding", "self-contained task", "small talk")
MAX_NEW_TOKENS = 40  # the longest reply the grammar allows is about 30 tokens
_MESSAGE_MARK = "\u0000MESSAGE\u0000"  # stands in for the message while the template is read

NATIVE_GATE_PROMPT = """Does answering this message need the assistant's saved notes \
about THIS user?

true: the message is about the user's own life: their friends, family, partner, \
coworkers or pets (often by first name), their plans, appointments, schedule, \
preferences, tastes, past events, their work or projects, or anything they told the \
assistant before.
false: general knowledge or trivia (even about famous people), math, coding, writing \
or any task fully described in the message, greetings, thanks and small talk.

Examples:
Message: What's the capital of Peru?
{"retrieve": false, "reason": "general knowledge"}
Message: When is my dentist appointment?
{"retrieve": true, "query": "dentist appointment", "reason": "user's plans"}
Message: Write a haiku about autumn leaves.
{"retrieve": false, "reason": "self-contained task"}
Message: What did Priya say about the wedding?
{"retrieve": true, "query": "Priya wedding", "reason": "someone the user knows"}
Message: thanks, that helps a lot!
{"retrieve": false, "reason": "small talk"}
Message: Why is the launch slipping again?
{"retrieve": true, "query": "launch delay", "reason": "user's life"}
Message: What is 15% of 80?
{"retrieve": false, "reason": "math"}
Message: Recommend a movie I'd enjoy.
{"retrieve": true, "query": "movie preferences", "reason": "user's tastes"}

Reply with ONE line of JSON like the examples.
Message: """


# The yes-no style's prompt: the model answers "true" when NO memory is needed. Its
# examples are our own, written for this prompt, and are in none of the gate's test sets.
ASK_PROMPT = """Can the assistant answer this message without its saved notes about the user?
true: the message can be answered from what it says plus general knowledge, even when it \
is about the user's own life (a task, advice, a question they fully explain), and \
greetings, thanks, math and trivia.
false: the answer depends on facts about the user that the message does not state: things \
they told the assistant before (their plans, people, purchases, prices, places, \
preferences, past events), or a reference to an earlier chat ("that", "last time", "again").

Answer each message with true or false after the arrow.

What's the capital of Peru? -> true
how much did the plumber charge us in the end? -> false
My brother is moving to Denver next month, what should he pack first? -> true
what was the name of that ramen place from the trip -> false
Write a haiku about autumn leaves. -> true
When is my dentist appointment? -> false
I slept badly last night, any tips for tonight? -> true
same plan as before for Saturday? -> false
What is 15% of 80? -> true
Recommend a movie I'd enjoy. -> false
"""
ASK_SUFFIX = " ->"  # one token after the message


def _alternatives(options: tuple[str, ...]) -> str:
    return " | ".join(json.dumps(option) for option in options)


# GBNF: the reply after the prefilled `{"retrieve":`. A skip carries no query at all.
GATE_GRAMMAR = f"""root ::= yes | no
yes ::= " true, \\"query\\": \\"" query "\\", \\"reason\\": \\"" yesreason "\\"}}"
no ::= " false, \\"reason\\": \\"" noreason "\\"}}"
query ::= qchar{{1,{QUERY_CHARS}}}
qchar ::= [^"\\\\\\x00-\\x1f]
yesreason ::= {_alternatives(YES_REASONS)}
noreason ::= {_alternatives(NO_REASONS)}
"""
PREFILL = '{"retrieve":'
YES_NO_GRAMMAR = 'root ::= " true" | " false"'
STYLES = ("json", "yes-no")


class NativeGateError(RuntimeError):
    """The llama.cpp server answered, but not as its native API should."""


def _post(base_url: str, path: str, body: dict[str, Any], timeout: float | None) -> Any:
    request = urllib.request.Request(
        base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


class NativeLlamaGate:
    """The LLM gate through llama.cpp's /completion: always valid, short JSON."""

    name = GateMode.LLM.value
    reads_conversation = True  # a follow-up is asked as its standalone text

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float | None = 5.0,
        threshold: float = 0.5,
        style: str = "json",
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)}")
        self._base_url = base_url.rstrip("/")
        self._timeout = timeout
        self.threshold = threshold  # P(true) at or above which the gate retrieves
        # "json": the whole decision written under the grammar (query and reason too).
        # "yes-no": one token, its probability read and compared with the threshold; the
        # query is the message less filler, as the local gate writes it. About 20x fewer
        # tokens generated, so on a CPU it answers in the time the prompt takes to read.
        self.style = style
        self._clock = clock
        self._lock = threading.Lock()
        self._template: tuple[str, str] | None = None  # prompt text before / after the message
        self._true_token: int | None = None

    def _prepare(self) -> tuple[str, str]:
        """The chat template around the message, and the " true" token; asked once."""
        with self._lock:
            if self._template is None:
                yes_no = self.style == "yes-no"
                text = ASK_PROMPT if yes_no else NATIVE_GATE_PROMPT
                messages = [{"role": "user", "content": text + _MESSAGE_MARK}]
                prompt = _post(self._base_url, "/apply-template", {"messages": messages}, 30)
                before, found, after = prompt["prompt"].partition(_MESSAGE_MARK)
                if not found:
                    raise NativeGateError("the chat template dropped the message")
                tokens = _post(self._base_url, "/tokenize", {"content": " true"}, 30)["tokens"]
                self._true_token = tokens[0] if len(tokens) == 1 else None
                # yes-no: the message's line ends the prompt, inside the user's turn, so
                # nothing but the arrow is read after it.
                self._template = (before, ASK_SUFFIX if yes_no else after + PREFILL)
            return self._template

    def _body(self, message: str) -> dict[str, Any]:
        before, after = self._prepare()
        yes_no = self.style == "yes-no"
        if yes_no:  # one message, one line: a newline would start a new example
            message = " ".join(message.split())
        body: dict[str, Any] = {
            "prompt": before + message + after,
            "grammar": YES_NO_GRAMMAR if yes_no else GATE_GRAMMAR,
            "n_predict": 1 if yes_no else MAX_NEW_TOKENS,
            "temperature": 0.0,  # greedy: the same message gets the same decision
            "n_probs": 5,
            "cache_prompt": True,  # the long prefix is read once, then reused
        }
        if self._true_token is not None and self.threshold != 0.5 and not yes_no:
            # Greedy picks " true" when logit_true + b > logit_false, i.e. P(true) > threshold.
            body["logit_bias"] = [[self._true_token, -logit(self.threshold)]]
        return body

    def warm(self) -> None:
        """Read the prompt's long prefix once, so the first real decision is as fast as the rest."""
        _post(self._base_url, "/completion", self._body("hello"), None)

    def p_retrieve(self, reply: dict[str, Any]) -> float | None:
        """P(retrieve) from the first generated token's probabilities, before any bias.

        The JSON style's first token answers "retrieve?"; the yes-no style's answers "can
        you do without the notes?", so there P(retrieve) is P(false).
        """
        probs = reply.get("completion_probabilities") or []
        if not probs:
            return None
        first = probs[0].get("top_logprobs") or probs[0].get("top_probs") or []
        mass = {"true": 0.0, "false": 0.0}
        for option in first:
            word = str(option.get("token", "")).strip().lower()
            if word in mass:
                value = option.get("logprob")
                mass[word] += math.exp(value) if value is not None else option.get("prob", 0.0)
        total = mass["true"] + mass["false"]
        if total <= 0:
            return None
        return (mass["false"] if self.style == "yes-no" else mass["true"]) / total

    def _read_yes_no(self, p: float | None, message: str) -> tuple[bool, str, str]:
        if p is None:
            raise GateReplyError("gate returned no probabilities — failing open")
        if p >= self.threshold:
            return True, memory_query(message), f"model: needs memory, p={p:.2f}"
        return False, "", f"model: no memory needed, p={p:.2f}"

    def decide(self, message: str, conversation: Conversation | None = None) -> GateDecision:
        """Ask the model through the grammar; any failure retrieves (fails open) and says why.

        A follow-up is asked as the resolver's standalone text ("When's Mom's birthday?"),
        not its bare words: the prompt reads one line per message, and its threshold was
        measured on messages that stand alone.
        """
        if not message.strip():
            return empty_decision(self.name)
        if conversation is not None:
            message = conversation.meant or message
        prompt_message, truncated = bounded(message)
        started = self._clock()
        tokens = (0, 0)
        confidence = None

        def done(retrieve: bool, query: str, reason: str, method: Method) -> GateDecision:
            elapsed_ms = (self._clock() - started) * 1000.0
            return model_call_decision(
                self.name,
                retrieve,
                query,
                reason,
                method,
                elapsed_ms,
                tokens,
                truncated,
                confidence,
            )

        try:
            reply = _post(self._base_url, "/completion", self._body(prompt_message), self._timeout)
            timings = reply.get("timings") or {}
            tokens = (
                int(reply.get("tokens_evaluated") or timings.get("prompt_n") or 0),
                int(reply.get("tokens_predicted") or timings.get("predicted_n") or 0),
            )
            confidence = self.p_retrieve(reply)
            if self.style == "yes-no":
                retrieve, query, reason = self._read_yes_no(confidence, prompt_message)
            else:
                retrieve, query, reason = parse_gate_reply(
                    PREFILL + str(reply.get("content", "")), prompt_message
                )
                query = query if retrieve else ""  # the grammar writes no query for a skip
        except GateReplyError as exc:
            return done(True, prompt_message, str(exc), Method.FAILED_OPEN)
        except TimeoutError:
            reason = f"gate timed out after {self._timeout:g} s — failing open"
            return done(True, prompt_message, reason, Method.FAILED_OPEN)
        except Exception as exc:  # noqa: BLE001 - every failure must fail open, by design
            if isinstance(getattr(exc, "reason", None), TimeoutError):
                reason = f"gate timed out after {self._timeout:g} s — failing open"
            else:
                reason = f"gate error ({type(exc).__name__}) — failing open"
            return done(True, prompt_message, reason, Method.FAILED_OPEN)
        return done(retrieve, query, reason, Method.MODEL)
