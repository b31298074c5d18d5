"""The gate registry: how each `GateMode` is built, and the one decision chain.

Every message is decided here, in one order:

    corrections -> the chosen gate -> the vocabulary rule -> the conversation

`gate_for` builds a mode's gate (`build_gate`) wrapped so that the user's corrections
decide first (`with_corrections`; the rule modes are never wrapped). `decide` asks that
gate (a `Forced` one for a re-run after a correction), fails open when it raises, lets the
vocabulary rule turn a judged skip into a retrieve, and reads a follow-up with the
conversation. Settings validation, the factory, the evaluations and the UI's help text
read the modes from `GateMode`. Builders import lazily: reading the table is free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from assistant.config import GateMode
from assistant.conversation.reading import Reading
from assistant.gates.base import Conversation, failed_open_decision
from assistant.gates.followup import in_conversation
from assistant.gates.forced import Forced
from assistant.gates.vocabulary import with_vocabulary

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.conversation.said import Said
    from assistant.gates.base import Gate, GateDecision
    from memory.corrections import CorrectionBook
    from memory.store import MemoryStore

_log = logging.getLogger(__name__)


class GateConfigError(ValueError):
    """A gate mode that does not exist, or that needs a model when none is configured."""


def _llm(settings: Settings, client: Any) -> Gate:
    from assistant.gates.llm import GATE_PROMPT, LOCAL_GATE_PROMPT, LlmGate

    if settings.native_url is not None:
        # Our own llama.cpp server: the same question, its answer constrained by a grammar,
        # asked the way that measured best for this model (assistant/gates/trust.py).
        from assistant.gates.native import NativeLlamaGate
        from assistant.gates.trust import load_trust, trust_key

        trust = load_trust(trust_key(settings))
        return NativeLlamaGate(
            settings.native_url,
            timeout=settings.gate_timeout,
            threshold=trust.threshold,
            style=trust.style,
        )
    # A keyless endpoint is a local model: small, and better with worked examples.
    prompt = LOCAL_GATE_PROMPT if settings.api_key is None else GATE_PROMPT
    return LlmGate(client, settings.gate_model, timeout=settings.gate_timeout, prompt=prompt)


def _local(settings: Settings, client: Any) -> Gate:
    from assistant.gates.local.shared import shared_local_gate

    return shared_local_gate()


def _cascade(settings: Settings, client: Any) -> Gate:
    from assistant.gates.cascade import CascadeGate
    from assistant.gates.local.shared import shared_local_gate
    from assistant.gates.trust import load_trust, trust_key

    trust = load_trust(trust_key(settings))
    return CascadeGate(shared_local_gate(), _llm(settings, client), trust)


def _rule(mode: GateMode) -> Callable[[Settings, Any], Gate]:
    def build(settings: Settings, client: Any) -> Gate:
        from assistant.gates.rules import always_gate, length_gate, never_gate

        return {
            GateMode.ALWAYS: always_gate,
            GateMode.NEVER: never_gate,
            GateMode.LENGTH: length_gate,
        }[mode]()

    return build


_BUILDERS: dict[GateMode, Callable[[Settings, Any], Gate]] = {
    GateMode.LLM: _llm,
    GateMode.LOCAL: _local,
    GateMode.CASCADE: _cascade,
    GateMode.ALWAYS: _rule(GateMode.ALWAYS),
    GateMode.NEVER: _rule(GateMode.NEVER),
    GateMode.LENGTH: _rule(GateMode.LENGTH),
}


def modes_for(model_available: bool) -> tuple[GateMode, ...]:
    """The modes that can run, given whether a model endpoint is available."""
    return tuple(m for m in GateMode if model_available or not m.needs_model)


def help_text() -> str:
    """One line per mode, for a UI tooltip or a CLI --help."""
    return " · ".join(f"{m}: {m.summary}" for m in GateMode)


def mode_of(name: str) -> GateMode | None:
    """The mode a gate's name or a typed mode names ("Local " is local); None: no mode."""
    try:
        return GateMode(str(name).strip().lower())
    except ValueError:
        return None


def build_gate(mode: str, settings: Settings, client: Any | None) -> Gate:
    """The gate for `mode`; GateConfigError for an unknown mode or a missing model."""
    entry = mode_of(mode)
    if entry is None:
        names = ", ".join(GateMode)
        raise GateConfigError(f"unknown gate mode {mode!r}; choose one of {names}")
    if entry.needs_model and client is None:
        raise needs_a_model(entry)
    return _BUILDERS[entry](settings, client)


def needs_a_model(mode: str) -> GateConfigError:
    """The error for a gate mode asked for when no model can answer it: one sentence."""
    return GateConfigError(
        f"gate mode '{mode}' needs a model: set ANTHROPIC_API_KEY, or "
        "ANTHROPIC_BASE_URL for an Anthropic-compatible server, or leave both unset for "
        "the local llama.cpp model"
    )


def with_corrections(gate: Gate, book: CorrectionBook | None, **kw: Any) -> Gate:
    """`gate` wrapped so corrections decide first; rule modes and no book: `gate` itself."""
    from assistant.gates.corrections.gate import CorrectedGate

    mode = mode_of(gate.name)
    if book is None or mode is None or not mode.judges or isinstance(gate, CorrectedGate):
        return gate
    return CorrectedGate(gate, book, **kw)


def gate_for(
    mode: str, settings: Settings, client: Any | None, corrections: CorrectionBook | None
) -> Gate:
    """The first two steps of the chain: `mode`'s gate, behind the user's corrections."""
    return with_corrections(build_gate(mode, settings, client), corrections)


def _reads_message_alone(gate: Gate) -> bool:
    """True for the rule modes: they stand for products that read the message alone."""
    mode = mode_of(gate.name)
    return mode is not None and not mode.judges


def _asked(gate: Gate, message: str, conversation: Conversation) -> GateDecision:
    """The gate's decision; a gate that raises fails open, as the LLM gate does itself.

    The LLM gate never raises, but the local gate can (missing or corrupt weights, a
    broken embedding model), and a turn must never end in an exception.
    """
    try:
        return gate.decide(message, conversation)
    except Exception as exc:  # noqa: BLE001 - every gate failure must fail open, by design
        _log.exception("gate %r raised; failing open", gate.name)
        return failed_open_decision(gate.name, message, exc)


def decide(
    gate: Gate,
    message: str,
    said: Sequence[Said] = (),
    reading: Reading | None = None,
    *,
    vocabulary: MemoryStore | None = None,
) -> GateDecision:
    """The decision for one message, the whole chain: never raises.

    `gate` is the chosen gate, behind the user's corrections when it judges (`gate_for`),
    or a `Forced` decision. `said` are the last exchanges (oldest first) and `reading` the
    message read with them (assistant/conversation/reading.py), once, by the caller. With
    `vocabulary` (the store whose keyword index the rule reads), a judged skip that names
    what the user's memories mention retrieves.

    - A forced decision is final: only a retrieve takes the conversation's query.
    - The rule modes (always, never, length) read the message alone: no conversation.
    - A follow-up of a general exchange is judged as it reads joined to that exchange
      ("and in the UK?" after the tallest mountain in Ireland), unless the gate reads the
      conversation itself (the `llm` gate, which keeps its model's standalone query).
    - A follow-up of a searched exchange searches too (`in_conversation`).
    """
    reading = reading if reading is not None else Reading(message, query=message)
    if isinstance(gate, Forced):
        forced = gate.decision
        # A forced re-run still searches with the conversation's words.
        return in_conversation(forced, reading) if forced.retrieve else forced
    alone = _reads_message_alone(gate)
    own = bool(getattr(gate, "reads_conversation", False))
    continued = reading.continued
    general = continued is not None and not continued.query
    asked = reading.query if general and not (alone or own) else message
    decision = _asked(gate, asked, Conversation(tuple(said), reading.query))
    if vocabulary is not None:
        decision = with_vocabulary(decision, message, vocabulary)
    if alone:
        return decision
    return in_conversation(decision, reading, keep_query=own)
