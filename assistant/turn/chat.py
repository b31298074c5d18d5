"""The home of a message: one user message in, one `Exchange` record out.

Readiness (a loading or failed local model), gate -> search -> reply, compare mode's
always-retrieve twin, capture (once), notices, and a failed exchange that keeps the
message all happen here. The UI and the evaluations reach it through the assistant's
front (`Assistant.answer`, front.py), the benchmarks directly; the UI passes callbacks to
draw as things happen and renders the record it gets back.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from assistant.gates.base import failed_open_decision
from assistant.gates.corrections.actions import Rerun, correct, rerun_of
from assistant.gates.rules import always_gate
from assistant.reply.respond import ModelResponder, ReplySource
from assistant.runtime.local_model import ALWAYS_SLOT, GATED_SLOT
from assistant.turn.pipeline import Turn, Variant
from assistant.turn.wiring import Wiring

if TYPE_CHECKING:
    from assistant.gates.base import GateDecision
    from assistant.reply.respond import TextCallback
    from assistant.runtime.local_model import ModelStatus
    from assistant.turn.pipeline import Pipeline

_log = logging.getLogger(__name__)
_exchange_ids = itertools.count(1)


@dataclass(frozen=True)
class Exchange:
    """One user message and everything shown for it: the gated turn and its twin, if any."""

    message: str
    gated: Turn
    always: Turn | None = None  # compare mode's always-retrieve twin
    id: int = field(default_factory=lambda: next(_exchange_ids))
    beat: int | None = None  # the talk's beat it played (assistant/talk.py), if one did

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The turns of this exchange, gated first."""
        return (self.gated,) if self.always is None else (self.gated, self.always)

    @property
    def always_ran_first(self) -> bool:
        """True when the always-retrieve twin ran before the gated turn."""
        return self.always is not None and self.always.id < self.gated.id


@dataclass(frozen=True)
class TurnOptions:
    """The switches of one exchange, as the sidebar sets them."""

    gate_mode: str | None = None  # None: the wiring's own gate
    capture: bool = True
    compare: bool = False  # also answer with always-retrieve, side by side


@dataclass(frozen=True)
class ReplyHooks:
    """Where one turn reports as it goes: the gate's decision, then each piece of reply."""

    on_decision: Callable[[GateDecision], None] | None = None
    on_text: TextCallback | None = None


# The UI opens a place to draw each twin when it starts, and returns its hooks; it is told
# where the reply will come from (the model, or the offline responder), to draw it so.
OpenTurn = Callable[[Variant, ReplySource], ReplyHooks]
# Called with the model's status while a loading local model is waited for.
OnWait = Callable[["ModelStatus"], None]


def _no_preparation(on_wait: OnWait | None = None) -> str | None:
    return None


class Chat:
    """Turns a user message into an `Exchange`. Safe to share across sessions' threads."""

    def __init__(
        self,
        wiring: Callable[[], Wiring],
        prepare: Callable[[OnWait | None], str | None] = _no_preparation,
    ) -> None:
        # `wiring` is read once per exchange, after `prepare`: a fallback to offline that
        # `prepare` made is used at once, and the exchange never sees two snapshots.
        self._wiring = wiring
        self._prepare = prepare
        self._always = always_gate()

    @classmethod
    def fixed(cls, pipeline: Pipeline) -> Chat:
        """A chat over one pipeline that never changes (benchmarks, tests)."""
        wiring = Wiring(pipeline=pipeline)
        return cls(lambda: wiring)

    def correct(self, turn: Turn) -> Rerun | None:
        """Record the opposite of `turn`'s decision (the "Wrong decision?" button).

        Returns the re-run a corrected skip asks for, to pass to `answer`; None for a
        corrected retrieve. ValueError when nothing was judged or no corrections are kept;
        MemoryStoreError when they cannot be written (a Chroma server that went away).
        """
        book = self._wiring().corrections
        if book is None:
            raise ValueError("this chat keeps no corrections")
        return rerun_of(correct(book, turn.message, turn.decision), turn.message, turn.id)

    def answer(
        self,
        message: str | Rerun,
        history: Sequence[Exchange] = (),
        options: TurnOptions | None = None,
        *,
        open_turn: OpenTurn | None = None,
        on_wait: OnWait | None = None,
    ) -> Exchange:
        """Answer one message (twice in compare mode) and capture once. Never raises.

        A `Rerun` (from `correct`) is answered with its decision forced on the gated turn
        (compare mode's always-retrieve twin runs as usual), without capture (its facts were
        captured the first time), and with the corrected turn left out of the history.
        """
        options = options or TurnOptions()
        rerun = message if isinstance(message, Rerun) else None
        if rerun is not None:
            message = rerun.message
            options = replace(options, capture=False)
        try:
            notice = self._prepare(on_wait)
            wiring = self._wiring()
            gated, always = self._respond(wiring, message, history, options, open_turn, rerun)
            if options.capture:  # after the reply is on screen, so capture never delays it
                gated = wiring.pipeline.capture(gated)
        except Exception as exc:  # noqa: BLE001 - one broken exchange must not end the chat
            _log.exception("the exchange failed")
            return Exchange(message, failed_turn(message, exc))
        if notice:  # the model was restarted, or replies fell back to offline: say so
            gated = replace(gated, notice=" ".join(filter(None, (notice, gated.notice))))
        return Exchange(message, gated, always)

    def _respond(
        self,
        wiring: Wiring,
        message: str,
        history: Sequence[Exchange],
        options: TurnOptions,
        open_turn: OpenTurn | None,
        rerun: Rerun | None = None,
    ) -> tuple[Turn, Turn | None]:
        # The conversation as the model saw it; a re-run leaves out the wrong answer it redoes.
        corrected = rerun.corrects if rerun is not None else None
        kept = [e for e in history if e.gated.id != corrected]
        gates = {Variant.GATED: wiring.gate(options.gate_mode), Variant.ALWAYS: self._always}
        forced = {Variant.GATED: rerun.decision if rerun is not None else None}
        pipelines = {
            v: in_slot(wiring.pipeline, TWIN_SLOTS[v]) if options.compare else wiring.pipeline
            for v in Variant
        }

        source = wiring.pipeline.responder.source  # where the reply will come from

        def run(variant: Variant) -> Turn:
            hooks = open_turn(variant, source) if open_turn is not None else ReplyHooks()
            return pipelines[variant].respond(
                message,
                conversation(kept, variant),
                gate=gates[variant],
                on_text=hooks.on_text,
                on_decision=hooks.on_decision,
                variant=variant,
                decision=forced.get(variant),
            )

        if not options.compare:
            return run(Variant.GATED), None
        # Each twin answers in its own slot, so neither reads what the other just read, and
        # the order decides nothing there. It still alternates: any other first-comer's cost
        # (the OS's page cache, a CPU clocking up) falls on each twin in turn.
        order = [Variant.GATED, Variant.ALWAYS]
        if sum(e.always is not None for e in history) % 2:
            order.reverse()
        done = {variant: run(variant) for variant in order}
        return done[Variant.GATED], done[Variant.ALWAYS]


# Compare mode's twins each answer in a llama.cpp slot of their own (see local_model.py).
TWIN_SLOTS = {Variant.GATED: GATED_SLOT, Variant.ALWAYS: ALWAYS_SLOT}


def conversation(history: Sequence[Exchange], variant: Variant) -> list[Turn]:
    """The conversation one twin has had: its own replies and its own earlier retrievals.

    An exchange from before compare mode was switched on has no always-retrieve twin: that
    twin's conversation starts from the gated turns, as the user saw them.
    """
    if variant is Variant.GATED:
        return [e.gated for e in history]
    return [e.always or e.gated for e in history]


def in_slot(pipeline: Pipeline, slot: int) -> Pipeline:
    """`pipeline` with its replies in `slot` of our own llama.cpp server, where it has one."""
    if not isinstance(pipeline.responder, ModelResponder):
        return pipeline  # the offline responder keeps no cache
    return pipeline.with_(responder=pipeline.responder.pinned(slot))


def failed_turn(message: str, exc: Exception) -> Turn:
    """A turn that broke before the pipeline finished it: kept, so the message is not lost."""
    return Turn(
        message=message,
        decision=failed_open_decision("app", message, exc),
        error=f"this turn failed: {type(exc).__name__}: {exc}",
    )
