"""The assistant's front: the one object the UI and the evaluations talk to.

`Assistant` answers messages (`answer`, `correct`), says which gate modes can run, reports
on the local model, and keeps the user's memories and corrections (list, add, delete,
search). Nothing outside it touches the local model, the store or the corrections book.
What answers lives in one immutable `Wiring` (wiring.py); `build_assistant` (factory.py)
assembles a front from settings, `Assistant.over` wraps a fixed pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assistant.config import GateMode, Settings
from assistant.gates.registry import modes_for, needs_a_model
from assistant.turn.chat import Chat
from assistant.turn.wiring import Switchboard, Wiring

if TYPE_CHECKING:  # the store imports Chroma: only building one pays for it
    from assistant.gates.base import Gate
    from assistant.gates.trust import LlmTrust
    from assistant.runtime.local_model import LocalModel, ModelStatus
    from assistant.turn.pipeline import Pipeline, Turn
    from memory.corrections import Correction, CorrectionBook
    from memory.records import Added, Memory
    from memory.store import MemoryStore


class Assistant:
    """Everything a UI or an evaluation needs, built once per process and shared by sessions.

    What answers lives in one immutable `Wiring`, held by a `Switchboard` (wiring.py) that
    swaps in an offline one whole when the local model fails: a turn that took the old
    snapshot finishes on it. Reading a status or a property never changes it.
    """

    def __init__(
        self,
        settings: Settings,
        store: MemoryStore,
        wiring: Wiring,
        local: LocalModel | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self._board = Switchboard(settings, wiring, local)
        # One chat for the process: it prepares the model and reads the current snapshot
        # at each exchange.
        self._chat = Chat(self._board.current, self._board.prepare)
        # The front answers with that chat's own methods: one signature, one docstring.
        self.answer = self._chat.answer
        self.correct = self._chat.correct

    @classmethod
    def over(
        cls, pipeline: Pipeline, settings: Settings | None = None, client: Any = None
    ) -> Assistant:
        """A front over one pipeline that never changes (evaluations, benchmarks, tests)."""
        return cls(settings or Settings(), pipeline.store, Wiring(pipeline=pipeline, client=client))

    # ---- what answers ---------------------------------------------------------------

    @property
    def local(self) -> LocalModel | None:
        """The llama.cpp server this process owns, if any (the switchboard's, read once)."""
        return self._board.local

    @property
    def wiring(self) -> Wiring:
        """The current snapshot of what answers; take it once and use it for a whole turn."""
        return self._board.current()

    @property
    def pipeline(self) -> Pipeline:
        """The current pipeline (responder, capture, default gate)."""
        return self.wiring.pipeline

    @property
    def client(self) -> Any:
        """The anthropic client in use, or None when replies come from offline parts."""
        return self.wiring.client

    @property
    def chat(self) -> Chat:
        """The home of a message, reading this assistant's current wiring (built once)."""
        return self._chat

    @property
    def offline_reason(self) -> str | None:
        """Why replies come (or, once a turn starts, will come) from the offline responder."""
        return self.wiring.offline_reason or self._board.failed_reason()

    @property
    def offline(self) -> bool:
        """True when replies come, or the next turn's will, from the offline responder."""
        return self.wiring.offline or self._board.failed_reason() is not None

    # ---- gates ----------------------------------------------------------------------

    @property
    def available_gate_modes(self) -> tuple[GateMode, ...]:
        """Gate modes that can run with this configuration."""
        return modes_for(not self.offline)

    @property
    def default_gate_mode(self) -> str:
        """The gate mode a new session starts with."""
        mode = self.wiring.pipeline.gate.name
        return mode if mode in self.available_gate_modes else GateMode.LOCAL

    def gate_modes_help(self) -> str:
        """One line per gate mode, saying what it does (the mode switch's tooltip)."""
        from assistant.gates.registry import help_text

        return help_text()

    def gate(self, mode: str) -> Gate:
        """The gate for `mode`, built on first use; a mode needing a failed model raises."""
        if mode not in self.available_gate_modes:  # the wiring does not know yet: say so now
            raise needs_a_model(mode)
        return self.wiring.gate(mode)

    def llm_trust(self) -> LlmTrust:
        """What the LLM gate of this configuration's model was measured to be worth."""
        from assistant.gates.trust import load_trust, trust_key

        return load_trust(trust_key(self.settings))

    def warm(self) -> None:
        """Pay first-use costs now, not on the presenter's first click: gate and store."""
        self.pipeline.gate.warm()
        self.store.search("dentist appointment", k=1)

    def warm_llm_gate(self) -> None:
        """Have the model read the LLM gate's prompt once, so its first decision is not cold."""
        if not self.offline:
            self.gate(GateMode.LLM).warm()

    # ---- the local model ------------------------------------------------------------

    def model_status(self) -> ModelStatus | None:
        """The local model's status, or None when this process runs no local model."""
        return None if self.local is None else self.local.status

    def wait_for_model(self, timeout: float) -> ModelStatus | None:
        """Wait up to `timeout` s for a loading local model; its status, or None without one."""
        return None if self.local is None else self.local.wait_ready(timeout)

    def restart_model(self) -> str:
        """Restart the local model by hand (the sidebar button)."""
        if self.local is None:
            return "There is no local model in this configuration."
        return self.local.restart("restarted on request")

    def prepare_turn(self, on_wait: Callable[[ModelStatus], None] | None = None) -> str | None:
        """Make sure the model can answer before a turn (the chat does this itself)."""
        return self._board.prepare(on_wait)

    # ---- corrections ----------------------------------------------------------------

    @property
    def corrections(self) -> CorrectionBook | None:
        """The user's corrections of the gate, which every judging gate consults."""
        return self.wiring.corrections

    @property
    def keeps_corrections(self) -> bool:
        """True when this assistant keeps the user's corrections of the gate."""
        return self.wiring.corrections is not None

    def can_correct(self, turn: Turn) -> bool:
        """True when `turn`'s badge gets a "Wrong decision?" button (a judged decision)."""
        from assistant.gates.corrections.actions import can_correct

        return self.keeps_corrections and can_correct(turn.decision)

    def standing_correction(self, turn: Turn) -> Correction | None:
        """The user's correction of this very message that overturned `turn`'s decision."""
        from assistant.gates.corrections.actions import standing_correction

        book = self.wiring.corrections
        return None if book is None else standing_correction(book, turn.message, turn.decision)

    def list_corrections(self) -> list[Correction]:
        """The user's corrections, newest first (none when none are kept)."""
        book = self.wiring.corrections
        return [] if book is None else book.list()

    def delete_correction(self, correction_id: str) -> bool:
        """Delete one correction: the gate decides messages like it itself again."""
        book = self.wiring.corrections
        return False if book is None else book.delete(correction_id)

    # ---- memories -------------------------------------------------------------------

    def memory_count(self) -> int:
        """How many memories the user has."""
        return self.store.count()

    def list_memories(self, limit: int) -> list[Memory]:
        """The newest `limit` memories, newest first."""
        return self.store.list(0, limit)

    def search_memories(self, query: str, k: int) -> list[Memory]:
        """The `k` memories closest to `query`, with no relevance cut-off (for browsing)."""
        return self.store.search(query, k=k, min_similarity=-1.0)

    def add_memory(self, text: str) -> Added:
        """Store a fact the user typed (the same fact again updates the existing memory)."""
        return self.store.remember(text, source="typed")

    def delete_memory(self, memory_id: str) -> bool:
        """Delete one memory."""
        return self.store.delete(memory_id)

    @property
    def is_demo_store(self) -> bool:
        """True when the store is the demo user's: the only one `reset_demo` may touch."""
        from memory.persona import DEMO_USER

        return self.store.user_id == DEMO_USER

    def reset_demo(self, keep_corrections: bool = False) -> int:
        """The demo persona's memories back exactly, and the corrections gone unless kept.

        Refused (MemoryStoreError, nothing changed) on a store that is not the demo user's.
        """
        from memory.persona import reset_demo

        restored = reset_demo(self.store)
        book = self.wiring.corrections
        if book is not None and not keep_corrections:
            book.clear()
        return restored

    def close(self) -> None:
        """Stop the local model this assistant started and let go of the store."""
        if self.local is not None:
            self.local.stop()
        self.store.close()
