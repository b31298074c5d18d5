"""The child process of local_model.py: llama.cpp's HTTP server, until the parent goes.

`LocalModel` starts `python -m assistant.runtime.llama_server --model FILE --port N` and
talks to it over HTTP. This module runs in that child: it refuses a file llama.cpp would
crash on, serves on loopback only, and exits as soon as its parent is gone (its stdin is a
pipe from the parent, and EOF on it means the parent died), so no server is ever left
holding a port.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading

from assistant.runtime.model_file import ModelFileError, inspect_gguf

HOST = "127.0.0.1"  # loopback only: the model server is never reachable from the network
DEFAULT_CTX_PER_SLOT = 4096
DEFAULT_SLOTS = 3  # also: a gate call and two tabs' replies run at once; more requests queue
MODEL_ALIAS = "local-gguf"  # the id requests name: llama.cpp serves one model


def _die_with_parent() -> None:
    """Exit when the parent goes away, however it goes (crash, SIGKILL, Ctrl-C)."""

    # Not PR_SET_PDEATHSIG: it fires when the parent *thread* that spawned us exits, and we
    # are spawned from a short-lived start-up thread.
    def watch() -> None:
        with contextlib.suppress(OSError):
            sys.stdin.buffer.read()  # returns at EOF: the parent closed the pipe or died
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def serve(argv: list[str] | None = None) -> int:
    """Run llama.cpp's server until the parent process goes away."""
    parser = argparse.ArgumentParser(prog="python -m assistant.runtime.llama_server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=DEFAULT_CTX_PER_SLOT * DEFAULT_SLOTS)
    parser.add_argument("--slots", type=int, default=DEFAULT_SLOTS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=None, help="repeatable sampling")
    args = parser.parse_args(argv)
    _die_with_parent()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    try:
        inspect_gguf(args.model)  # never hand llama.cpp a file that would crash it
    except ModelFileError as exc:
        print(f"refused: {exc}", file=sys.stderr, flush=True)
        return 2
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    params.n_parallel = args.slots
    params.port = args.port
    params.hostnames = [HOST]
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True  # apply the model's own chat template
    params.model_alias = MODEL_ALIAS
    if args.seed is not None:
        params.sampling.seed = args.seed
        params.cache_prompt = False  # a reused KV cache changes the numbers, and the output
    server = xllamacpp.Server(params)  # serves on its own threads while this object lives
    threading.Event().wait()  # until SIGTERM or the parent's pipe closes
    del server
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:]))
