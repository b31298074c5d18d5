"""The built-in llama.cpp model for an evaluation or a benchmark: started, waited for, stopped.

Every evaluation and benchmark that runs the local model does the same three things: start
the server (or take the one `build_assistant` started), wait until it answers, and stop it
however the run ends. `start_local(settings)` does all three; use what it returns as a
context manager, or call its `stop()` when the run ends:

    try:
        model = start_local(settings)
    except ModelNotReady as exc:
        return {"skipped": str(exc)}
    with model:
        client = make_client(model.settings)
        ...

`attach(assistant.local, assistant.settings)` waits for the server `build_assistant` started
(None when it started none), and stops it the same way.
Nothing heavy is imported here: llama.cpp is loaded by the child process only.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.runtime.local_model import LocalModel, ModelStatus


class ModelNotReady(RuntimeError):
    """The local model did not start (it has been stopped again)."""


@dataclass
class RunningModel:
    """A ready local model server, the settings that point at it, and how long it took."""

    local: LocalModel
    settings: Settings  # base_url, native_url, gate and chat model point at the server
    status: ModelStatus
    ready_s: float  # from the start (or from `started`, for attach) until it answered

    @property
    def name(self) -> str:
        """The model's own name, from its GGUF header."""
        return self.status.name

    def stop(self) -> None:
        """Stop the server; safe to call twice."""
        self.local.stop()

    def __enter__(self) -> RunningModel:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@overload
def attach(
    local: LocalModel, settings: Settings, *, started: float | None = None
) -> RunningModel: ...
@overload
def attach(
    local: LocalModel | None, settings: Settings, *, started: float | None = None
) -> RunningModel | None: ...
def attach(
    local: LocalModel | None, settings: Settings, *, started: float | None = None
) -> RunningModel | None:
    """Wait for a server already starting; stop it and raise ModelNotReady if it fails.

    None for no server (`build_assistant` starts none when a key or an endpoint is set).
    """
    if local is None:
        return None
    started = time.perf_counter() if started is None else started
    status = local.wait_ready()
    if not status.ready:
        local.stop()
        raise ModelNotReady(f"the local model did not start: {status.error}")
    return RunningModel(local, settings, status, round(time.perf_counter() - started, 1))


def start_local(
    settings: Settings | None = None, *, say: bool = False, **options: Any
) -> RunningModel:
    """Start the built-in model for `settings` (default: from the environment) and wait.

    `options` go to LocalModel (`threads`, say). With `say`, a line on stderr tells the user
    why nothing happens for a while. Raises ModelNotReady, the server stopped, on failure.
    """
    from assistant.config import Settings
    from assistant.turn.factory import start_local_model

    if say:
        print("starting the local model (llama.cpp on 127.0.0.1)…", file=sys.stderr)
    started = time.perf_counter()
    pointed, local = start_local_model(settings or Settings.from_env(), **options)
    return attach(local, pointed, started=started)
