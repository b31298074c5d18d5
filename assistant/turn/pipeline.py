"""The turn: decision -> memory search (only on yes) -> streamed reply -> Turn.

Capture is not part of the turn: `Pipeline.capture` runs after the reply is on screen, once
per exchange, when the chat asks for it (assistant/turn/chat.py).

The decision is the gate chain's (assistant/gates/registry.py), asked once per turn.

Nothing here imports Streamlit: the UI passes callbacks and renders the `Turn` it gets back.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from assistant.conversation.reading import Reading, read
from assistant.conversation.said import RECENT_TURNS, Said
from assistant.conversation.search import reply_used, searched
from assistant.gates.base import Gate, GateDecision
from assistant.gates.forced import Forced
from assistant.gates.registry import decide
from assistant.reply.capture import CaptureMethod, Capturer, CaptureResult
from assistant.reply.respond import HistoryItem, Lookup, ReplySource, Responder, TextCallback
from assistant.runtime.completion import describe_error
from assistant.text import Label
from memory.injection import reply_follows, screen
from memory.records import Memory

if TYPE_CHECKING:  # the store imports Chroma; the pipeline only needs its type here
    from memory.store import MemoryStore

MAX_MESSAGE_CHARS = 20_000  # longer messages are cut, with a notice on the turn
SEARCH_K = 5
_turn_ids = itertools.count(1)


class Variant(Label):
    """Which twin of an exchange a turn is: the gate's, or compare mode's always-retrieve."""

    GATED = "gated"
    ALWAYS = "always"


def lookup_of(retrieve: bool, search_error: str | None) -> Lookup:
    """What the memory system did for a message: skipped it, searched, or failed to."""
    if not retrieve:
        return Lookup.SKIPPED
    return Lookup.FAILED if search_error else Lookup.SEARCHED


def estimate_tokens(text: str) -> int:
    """A model-free token estimate (~4 characters a token), for the session stats."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class Timings:
    """Milliseconds per stage of one turn."""

    gate_ms: float = 0.0
    search_ms: float = 0.0
    first_token_ms: float | None = None  # from the start of the turn
    reply_ms: float = 0.0
    capture_ms: float = 0.0
    total_ms: float = 0.0  # gate + search + reply (capture runs after the reply is shown)
    model_ms: float = 0.0  # time inside model calls (gate and reply), part of total_ms

    @property
    def overhead_ms(self) -> float:
        """Time spent outside the model calls: our own cost per turn."""
        return max(0.0, self.total_ms - self.model_ms)


@dataclass(frozen=True)
class Usage:
    """Tokens spent by the model calls of one turn."""

    gate_input: int = 0
    gate_output: int = 0
    chat_input: int = 0
    chat_output: int = 0
    memory_tokens: int = 0  # estimated tokens of the memories sent with the message

    @property
    def total(self) -> int:
        """All tokens sent and received."""
        return self.gate_input + self.gate_output + self.chat_input + self.chat_output


@dataclass(frozen=True)
class Turn:
    """Everything about one user message and its reply: what the UI renders."""

    message: str
    decision: GateDecision
    memories: tuple[Memory, ...] = ()
    # Found by the search but kept out of the prompt: each one's `flag` says why.
    withheld: tuple[Memory, ...] = ()
    reply: str = ""
    reply_source: ReplySource = ReplySource.MODEL
    capture: CaptureResult | None = None
    timings: Timings = field(default_factory=Timings)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None  # what went wrong in this turn: the search or the reply
    reply_error: str | None = None  # the reply's own failure (cut off, none, an API error)
    reply_cut_short: bool = False  # the reply stopped at the length limit, text and all
    search_error: str | None = None  # the memory search's own failure
    notice: str | None = None  # e.g. the message was cut
    meant: str = ""  # a follow-up read with the exchange it continues, as the model was told
    variant: Variant = Variant.GATED
    id: int = field(default_factory=lambda: next(_turn_ids))

    @property
    def searched(self) -> bool:
        """True when the memory store was searched for this turn."""
        return self.decision.retrieve

    @property
    def lookup(self) -> Lookup:
        """What the memory system did for this turn, as the reply model was told."""
        return lookup_of(self.decision.retrieve, self.search_error)

    @property
    def reply_usable(self) -> bool:
        """True when the reply is part of the conversation, even if the search failed.

        A reply cut at the length limit is: the user read it, and "When's her birthday?"
        after a long list of gift ideas for Mom still means Mom's.
        """
        return self.reply_error is None or self.reply_cut_short

    def said(self) -> Said:
        """This turn as the next turn's conversation reads it."""
        searched = self.decision.retrieve and self.search_error is None
        return Said(
            user=self.message,
            assistant=self.reply,
            query=(self.decision.query or self.message) if searched else "",
            memories=tuple(m.text for m in self.memories),
        )

    def history_item(self) -> HistoryItem:
        """This turn as the next turn's model history, with only the memories its reply used.

        Replayed, the others were what the 1.5B model answered the next turn with. A failed
        search keeps its note: it says why the reply could not check.
        """
        searched = self.lookup is Lookup.SEARCHED
        used = reply_used([m.text for m in self.memories], self.reply, self.message)
        lookup = Lookup.SKIPPED if searched and not used else self.lookup
        return HistoryItem(self.message, self.reply, used, lookup, self.meant if used else "")


_log = logging.getLogger(__name__)


class Pipeline:
    """Runs turns. Built once per app process; safe to share across sessions' threads.

    Never changed once built: a pipeline with other parts is a new one (`with_`).
    """

    def __init__(
        self,
        *,
        gate: Gate,
        store: MemoryStore,
        responder: Responder,
        capturer: Capturer | None = None,
        k: int = SEARCH_K,
        clock: Callable[[], float] = time.perf_counter,
        screen_memories: bool = True,
        check_reply: bool = True,
        vocabulary: bool = True,
        conversation: bool = True,
    ) -> None:
        self.gate = gate
        self.store = store
        self.responder = responder
        self.capturer = capturer
        self.k = k
        self._clock = clock
        # Each switch below is off only to measure what its part is worth. The injection
        # defences (docs/memory.md): memories that read like instructions never reach the
        # prompt, and a reply that carries one out is written again without that memory.
        self.screen_memories = screen_memories
        self.check_reply = check_reply
        self.vocabulary = vocabulary  # a skip that names the memories' words retrieves
        self.conversation = conversation  # a follow-up is read with the last exchanges

    def with_(self, **parts: Any) -> Pipeline:
        """A new pipeline with some parts replaced (gate, responder, capturer, ...)."""
        current = {
            "gate": self.gate,
            "store": self.store,
            "responder": self.responder,
            "capturer": self.capturer,
            "k": self.k,
            "clock": self._clock,
            "screen_memories": self.screen_memories,
            "check_reply": self.check_reply,
            "vocabulary": self.vocabulary,
            "conversation": self.conversation,
        }
        return Pipeline(**{**current, **parts})

    def respond(
        self,
        message: str,
        history: Sequence[Turn] = (),
        *,
        gate: Gate | None = None,
        on_text: TextCallback | None = None,
        on_decision: Callable[[GateDecision], None] | None = None,
        variant: Variant = Variant.GATED,
        decision: GateDecision | None = None,
    ) -> Turn:
        """Gate, search only if the gate says so, and stream the reply. Never raises.

        The decision comes from the one chain (assistant/gates/registry.py: corrections, the
        gate, the vocabulary rule, the conversation). `decision`, when given, is used instead
        of asking the gate (a re-run after the user corrected a skip), as a `Forced` gate.
        """
        started = self._clock()
        notice = None
        if len(message) > MAX_MESSAGE_CHARS:
            notice = (
                f"Your message was {len(message):,} characters; "
                f"only the first {MAX_MESSAGE_CHARS:,} were used."
            )
            message = message[:MAX_MESSAGE_CHARS]
        # The last exchanges, for a follow-up ("When's her birthday?") and what it continues.
        recent = [t for t in history if t.reply_usable][-RECENT_TURNS:] if self.conversation else []
        said = [t.said() for t in recent]
        reading = read(message, said) if said else Reading(message, query=message)
        judge = Forced(decision) if decision is not None else gate or self.gate
        store = self.store if self.vocabulary else None
        decision = decide(judge, message, said, reading, vocabulary=store)
        if decision.truncated and notice is None:
            notice = "The gate judged only the start of this long message."
        if on_decision is not None:
            on_decision(decision)
        after_gate = self._clock()

        memories: tuple[Memory, ...] = ()
        withheld: tuple[Memory, ...] = ()
        error = None
        if decision.retrieve:
            try:
                memories = searched(self.store, decision.query or message, reading, self.k)
            except Exception as exc:  # noqa: BLE001 - a broken store must not end the chat
                error = f"memory search failed: {type(exc).__name__}: {exc}"
        if self.screen_memories:
            memories, withheld = screen(memories)
        after_search = self._clock()

        # `history` is the conversation as the model saw it: one turn per exchange.
        past = [t.history_item() for t in history if t.reply_usable]
        lookup = lookup_of(decision.retrieve, error)
        # A follow-up's facts are introduced with the exchange it continues (the 1.5B model
        # read "she" as whoever a nearby fact named). Not in the baselines (always, never):
        # they read the message alone, as the products they stand for do.
        meant = reading.query if decision.retrieve and decision.query_source else ""
        result = self.responder.reply(
            message, memories, past, on_text=on_text, lookup=lookup, meant=meant
        )
        obeyed = self._obeyed(result.text, memories, message) if result.error is None else ()
        if obeyed:
            # The reply carried out an instruction hidden in a memory the check let through:
            # answer again without that memory. The streamed first reply is replaced.
            memories = tuple(m for m in memories if m.id not in {o.id for o in obeyed})
            withheld += obeyed
            first = result
            result = self.responder.reply(message, memories, past, lookup=lookup, meant=meant)
            result.elapsed_ms += first.elapsed_ms
            result.input_tokens += first.input_tokens
            result.output_tokens += first.output_tokens
            result.first_token_ms = first.first_token_ms
            retold = (
                "The first reply carried out an instruction found in a memory; "
                "it was written again without that memory."
            )
            notice = f"{notice} {retold}" if notice else retold
        finished = self._clock()
        gate_ms = (after_gate - started) * 1000.0
        model_ms = decision.model_ms + (
            result.elapsed_ms if result.source == ReplySource.MODEL else 0.0
        )
        return Turn(
            message=message,
            decision=decision,
            memories=memories,
            withheld=withheld,
            reply=result.text,
            reply_source=result.source,
            timings=Timings(
                gate_ms=gate_ms,
                search_ms=(after_search - after_gate) * 1000.0,
                first_token_ms=None
                if result.first_token_ms is None
                else (after_search - started) * 1000.0 + result.first_token_ms,
                reply_ms=result.elapsed_ms,
                total_ms=(finished - started) * 1000.0,
                model_ms=model_ms,
            ),
            usage=Usage(
                gate_input=decision.input_tokens,
                gate_output=decision.output_tokens,
                chat_input=result.input_tokens,
                chat_output=result.output_tokens,
                memory_tokens=sum(estimate_tokens(m.text) for m in memories),
            ),
            error=error or result.error,
            reply_error=result.error,
            reply_cut_short=result.cut_short,
            search_error=error,
            notice=notice,
            meant=meant,
            variant=variant,
        )

    def _obeyed(self, reply: str, memories: Sequence[Memory], message: str) -> tuple[Memory, ...]:
        """The memories whose instruction `reply` carries out (a canary check on the reply)."""
        if not self.check_reply:
            return ()
        out = []
        for m in memories:
            payload = reply_follows(reply, m.text, message)
            if payload is not None:
                out.append(replace(m, flag=f"the reply repeated {payload!r}, as the memory asked"))
        return tuple(out)

    def capture(self, turn: Turn) -> Turn:
        """Save facts the user stated; runs after the reply is on screen. Never raises."""
        if self.capturer is None:
            return turn
        started = self._clock()
        try:
            result = self.capturer.capture(turn.message)
        except Exception as exc:  # noqa: BLE001 - capture must never break the chat
            result = CaptureResult(method=CaptureMethod.RULES, error=describe_error(exc))
        elapsed = (self._clock() - started) * 1000.0
        return replace(turn, capture=result, timings=replace(turn.timings, capture_ms=elapsed))
