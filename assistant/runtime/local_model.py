"""A real model with no key and no network: llama.cpp's server on 127.0.0.1, in a child process.

`LocalModel` owns one child process running llama.cpp's own HTTP server (through the
`xllamacpp` wheel). The server speaks the Anthropic Messages API, so everything downstream
(gate, replies, capture) uses it through the same anthropic client as any other endpoint.

Why a child process: llama.cpp's server cannot be stopped from Python once started, and a
crash in native code must not take the app down. The child dies with its parent (its stdin
is a pipe from us, and EOF on it means we are gone), so no server is ever left holding a
port.

The child itself is llama_server.py beside this file: `python -m
assistant.runtime.llama_server --model FILE --port N` starts one by hand.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from assistant.runtime.child_server import ChildExited, end_process, free_port, wait_until_healthy
from assistant.runtime.llama_server import DEFAULT_CTX_PER_SLOT, DEFAULT_SLOTS, HOST, MODEL_ALIAS
from assistant.runtime.model_file import (
    Progress,
    assemble_default_model,
    default_cache_dir,
    inspect_gguf,
)
from assistant.text import Label

# The slot plan: llama.cpp keeps a prompt cache per slot. Compare mode's twins each answer
# in a slot of their own, finding their own conversation already read. Other requests go
# where llama.cpp puts them; one landing in a twin's slot moves its cache to the server's
# RAM prompt cache (cache_ram_mib), from which the twin's next request loads it back.
GATED_SLOT = 1
ALWAYS_SLOT = 2
START_TIMEOUT_S = 180.0
# How long stop() waits for a ready callback still running: one whose request the stop cut
# off ends at once; only a callback that ignores the server could take this long.
CALLBACK_GRACE_S = 5.0
_log = logging.getLogger(__name__)


class ModelState(Label):
    """Where the local model is in its life."""

    ASSEMBLING = "assembling"  # the GGUF is being built from its slices (first start)
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass(frozen=True)
class ModelStatus:
    """What the local model is doing now, for the UI's connection panel."""

    state: ModelState
    detail: str = ""
    progress: float = 0.0  # 0..1 while assembling
    name: str = ""  # the model's own name, from its GGUF header
    error: str | None = None
    restarts: int = 0

    @property
    def ready(self) -> bool:
        """True when the server answers requests."""
        return self.state is ModelState.READY

    @property
    def loading(self) -> bool:
        """True while the model file is being assembled or llama.cpp is loading it."""
        return self.state in (ModelState.ASSEMBLING, ModelState.LOADING)


def health(base_url: str, timeout: float = 2.0) -> bool:
    """True when llama.cpp's /health says the model is loaded (it answers 503 while loading)."""
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=timeout) as r:
            return r.status == 200 and json.loads(r.read() or b"{}").get("status") == "ok"
    except (OSError, ValueError):
        return False


class LocalModel:
    """Starts, watches and stops one llama.cpp server child process on 127.0.0.1."""

    def __init__(
        self,
        model_path: str | None = None,
        *,
        cache_dir: Path | None = None,
        slots: int = DEFAULT_SLOTS,
        ctx_per_slot: int = DEFAULT_CTX_PER_SLOT,
        threads: int | None = None,
        port: int | None = None,
        start_timeout: float = START_TIMEOUT_S,
        log_path: Path | None = None,
        seed: int | None = None,
    ) -> None:
        self._model_path = model_path  # None: the default model, assembled from its parts
        self._cache_dir = cache_dir or default_cache_dir()
        self._slots = slots
        self._ctx = ctx_per_slot * slots
        self._threads = threads or min(4, os.cpu_count() or 2)
        self.port = port or free_port()
        self._start_timeout = start_timeout
        # One log per port: two apps on one machine share the cache folder, not their logs.
        self._log_path = log_path or self._cache_dir / "logs" / f"llama-server-{self.port}.log"
        # A fixed seed (prompt caching off) makes sampling repeatable; None: one per request.
        self._seed = seed
        self._proc: subprocess.Popen[bytes] | None = None
        self._status = ModelStatus(ModelState.LOADING, "starting")
        self._lock = threading.RLock()
        self._booting: threading.Thread | None = None
        self._ready = threading.Event()
        self._on_ready: list[Callable[[], None]] = []
        # Threads running a ready callback now: stop() lets them end before it returns.
        self._calling_back: set[int] = set()
        self._callbacks_idle = threading.Condition()
        atexit.register(self.stop)

    # ---- state --------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """Where the Messages API is: hand this to the anthropic client as base_url."""
        return f"http://{HOST}:{self.port}"

    @property
    def alias(self) -> str:
        """The model id requests name (llama.cpp serves one model and accepts any id)."""
        return MODEL_ALIAS

    @property
    def status(self) -> ModelStatus:
        """The latest status."""
        return self._status

    @property
    def pid(self) -> int | None:
        """The server child's pid while it runs."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _set(self, **changes: object) -> None:
        self._status = replace(self._status, **changes)

    def _progress(self, fraction: float, what: str) -> None:
        self._set(state=ModelState.ASSEMBLING, progress=fraction, detail=what)

    # ---- lifecycle ----------------------------------------------------------------

    def start(self) -> LocalModel:
        """Begin starting the server in the background; returns at once."""
        with self._lock:
            if self._booting is None or not self._booting.is_alive():
                self._ready.clear()
                self._booting = threading.Thread(
                    target=self._boot, name="local-model-start", daemon=True
                )
                self._booting.start()
        return self

    def on_ready(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the start-up thread) each time the server becomes ready.

        Already ready: it is called now. A restart calls it again, since a new server
        starts with an empty prompt cache.
        """
        with self._lock:
            self._on_ready.append(callback)
            ready = self._status.ready
            server = self._proc
        if ready:
            self._run_callback(callback, server)

    def _run_callback(
        self, callback: Callable[[], None], server: subprocess.Popen[bytes] | None
    ) -> None:
        """Run one ready callback for `server`; its failure is logged, never raised."""
        me = threading.get_ident()
        with self._callbacks_idle:
            self._calling_back.add(me)
        try:
            callback()
        except Exception as exc:  # noqa: BLE001 - a warm-up is an optimisation: log it, serve anyway
            if self._proc is not server:
                # The server it talked to was stopped under it (the process is exiting, or a
                # restart): the request was cut off, as expected. Nothing to see at shutdown.
                _log.debug(
                    "a ready callback of the local model ended as the server stopped: %s: %s",
                    type(exc).__name__,
                    exc,
                )
            else:
                _log.warning("a ready callback of the local model failed", exc_info=True)
        finally:
            with self._callbacks_idle:
                self._calling_back.discard(me)
                self._callbacks_idle.notify_all()

    def _await_callbacks(self) -> None:
        """Give ready callbacks cut off by a stop a moment to end (and say so) first."""
        me = threading.get_ident()  # a callback that stops the server must not wait for itself
        with self._callbacks_idle:
            self._callbacks_idle.wait_for(
                lambda: not self._calling_back - {me}, timeout=CALLBACK_GRACE_S
            )

    def wait_ready(self, timeout: float | None = None) -> ModelStatus:
        """Block until the server is ready or has failed (or `timeout` passes)."""
        self._ready.wait(self._start_timeout if timeout is None else timeout)
        return self._status

    def _resolve(self, progress: Progress) -> Path:
        if self._model_path:
            return Path(self._model_path).expanduser()
        return assemble_default_model(self._cache_dir, progress)

    def _boot(self) -> None:
        started = time.perf_counter()
        try:
            path = self._resolve(self._progress)
            self._set(state=ModelState.LOADING, detail="checking the model file", progress=1.0)
            info = inspect_gguf(path)  # refuse a truncated or corrupt file before loading it
            self._set(name=info.name, detail=f"loading {info.name} into llama.cpp")
            self._spawn(info.path)
            self._wait_healthy()
        except Exception as exc:  # noqa: BLE001 - the UI shows why, and falls back to offline
            _log.warning("local model failed to start: %s", exc)
            self.stop(state=ModelState.FAILED)
            self._set(state=ModelState.FAILED, error=str(exc) or type(exc).__name__, detail="")
        else:
            secs = time.perf_counter() - started
            self._set(state=ModelState.READY, detail=f"started in {secs:.1f} s", error=None)
            # Before waiters are released: the first decision after "ready" is a warm one.
            server = self._proc
            for callback in list(self._on_ready):
                self._run_callback(callback, server)
        finally:
            self._ready.set()

    def _spawn(self, path: Path) -> None:
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable, "-m", "assistant.runtime.llama_server",
            "--model", str(path), "--port", str(self.port), "--ctx", str(self._ctx),
            "--slots", str(self._slots), "--threads", str(self._threads),
        ]  # fmt: skip
        if self._seed is not None:
            cmd += ["--seed", str(self._seed)]
        with open(self._log_path, "wb") as log:
            # stdin is our lifeline to the child: when this process dies, the pipe closes
            # and the child exits, so no orphan server keeps the port.
            self._proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                cwd=str(Path(__file__).resolve().parent.parent),
            )  # fmt: skip

    def _wait_healthy(self) -> None:
        def running() -> bool:
            proc = self._proc  # stop() may clear it from another thread
            return proc is not None and proc.poll() is None

        try:
            wait_until_healthy(
                running, lambda: health(self.base_url, timeout=1.0), self._start_timeout
            )
        except ChildExited:
            raise RuntimeError(
                f"llama.cpp exited while loading the model: {self.log_tail() or 'no output'}"
            ) from None
        except TimeoutError:
            raise TimeoutError(
                f"llama.cpp did not become ready in {self._start_timeout:.0f} s"
            ) from None

    def log_tail(self, lines: int = 3) -> str:
        """The last lines the server wrote, for error messages."""
        try:
            text = self._log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text[-lines:])

    def ensure_running(self) -> str | None:
        """Restart a server that died or stopped answering; says so, or None if all is well."""
        with self._lock:
            proc = self._proc
            if self._status.state is not ModelState.READY or proc is None:
                return None
            if proc.poll() is None:
                if health(self.base_url, timeout=2.0):
                    return None
                # Not answering: either dying (a killed process with native threads takes a
                # moment to be reaped) or hung. Give it a moment; restart() ends a hung one.
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    return self.restart("the local model stopped answering")
            code = proc.returncode
        return self.restart(f"the local model had stopped (exit code {code})")

    def restart(self, why: str = "restart requested") -> str:
        """Stop and start the server again, waiting until it is ready; says what happened."""
        started = time.perf_counter()
        with self._lock:
            self.stop(state=ModelState.LOADING)
            self._set(restarts=self._status.restarts + 1, error=None)
            self.start()
        status = self.wait_ready()
        secs = time.perf_counter() - started
        if status.ready:
            return f"{why}; restarted it in {secs:.1f} s"
        return f"{why}; restarting failed: {status.error}"

    def stop(self, state: ModelState = ModelState.STOPPED) -> None:
        """Stop the server and wait for it to exit; safe to call twice."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is not None:
                end_process(proc)
                if proc.stdin is not None:
                    with contextlib.suppress(OSError):
                        proc.stdin.close()
            if self._status.state is not ModelState.FAILED:
                self._set(state=state)
        # At exit this is atexit's call: a warm-up cut off mid-request ends here, quietly,
        # instead of in a daemon thread racing the interpreter's shutdown.
        self._await_callbacks()
