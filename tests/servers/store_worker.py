"""A memory store in its own Python process, driven by JSON lines over stdin and stdout.

Not shipped: only tests and benchmarks run several store processes against one server.

Tests and benchmarks use it to run real, separate processes against one Chroma server:
`Worker(host, port, user)` starts `python -m tests.servers.store_worker`, which opens its
store before it answers "ready"; `worker.call("add", text=...)` sends one command and
waits for its reply.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from tests.processes import start_python


def _memory(m: Any) -> dict[str, Any]:
    return {"id": m.id, "text": m.text, "similarity": m.similarity}


def _burst(store: Any, tag: str, n: int, search_every: int) -> dict[str, Any]:
    """Write `n` distinct memories (searching every few writes); report ids and errors."""
    ids, errors, searches = [], [], 0
    for i in range(n):
        try:
            added = store.remember(f"Note {tag}x{i}: parcel {i} of batch {tag} is in locker {i}")
            if added.merged:
                errors.append(f"write {i} merged into {added.id}")
            ids.append(added.id)
            if i % search_every == 0:
                store.search(f"where is parcel {i} of batch {tag}?", k=5)
                searches += 1
        except Exception as exc:  # noqa: BLE001 - counted and reported to the parent
            where = traceback.extract_tb(exc.__traceback__)
            calls = " < ".join(f"{f.name}:{f.lineno}" for f in reversed(where[-6:]))
            errors.append(f"{type(exc).__name__}: {exc} (at {calls})")
    return {"ids": ids, "errors": errors, "searches": searches}


def _verify(store: Any, ids: list[str]) -> dict[str, Any]:
    """For each id: is it readable, and is it the top hit for its own unique keyword?"""
    readable = found = 0
    for mid in ids:
        memory = store.get(mid)
        if memory is None:
            continue
        readable += 1
        tag = memory.text.split()[1].rstrip(":")  # the "<tag>x<i>" word only it has
        top = store.search(tag, k=1, min_similarity=-1)
        found += bool(top and top[0].id == mid)
    return {"readable": readable, "found": found, "count": store.count()}


def _handle(store: Any, op: str, args: dict[str, Any]) -> Any:
    if op == "remember":
        added = store.remember(args["text"])
        return {"id": added.id, "merged": added.merged}
    if op == "update":
        return _memory(store.update(args["id"], args["text"]))
    if op == "delete":
        return store.delete(args["id"])
    if op == "get":
        m = store.get(args["id"])
        return None if m is None else _memory(m)
    if op == "search":
        found = store.search(args["query"], args.get("k", 5), args.get("min_similarity"))
        return [_memory(m) for m in found]
    if op == "list":
        return [_memory(m) for m in store.list(0, args.get("limit", 1000))]
    if op == "export":
        return [_memory(m) for m in store.export()]
    if op == "count":
        return store.count()
    if op == "burst":
        return _burst(store, args["tag"], args["n"], args.get("search_every", 10))
    if op == "verify":
        return _verify(store, args["ids"])
    raise ValueError(f"unknown op {op!r}")


def serve(host: str, port: int, user: str, cache_dir: Path) -> None:
    """Open the store, say ready, then answer one JSON command per line until EOF."""
    from memory.store import MemoryStore

    store = MemoryStore.http(host, port, user, cache_dir=cache_dir)
    store.warm()
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        started = time.perf_counter()
        try:
            reply = {"ok": _handle(store, request["op"], request.get("args", {}))}
        except Exception as exc:  # noqa: BLE001 - the parent sees every failure
            reply = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
        reply["ms"] = (time.perf_counter() - started) * 1000
        print(json.dumps(reply), flush=True)


class WorkerError(RuntimeError):
    """The worker process failed a command or died."""


class Worker:
    """The parent's handle on one worker process; use as a context manager."""

    def __init__(
        self, host: str, port: int, user: str, cache_dir: Path, *, wait: bool = True
    ) -> None:
        """Start the worker; with wait=False, call wait_ready() before the first command
        (several workers then load their stores at the same time)."""
        self._proc = start_python(
            "-m",
            "tests.servers.store_worker",
            host,
            str(port),
            user,
            str(cache_dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.pid = 0
        if wait:
            self.wait_ready()

    def wait_ready(self) -> int:
        """Wait until the worker has opened its store; its process id."""
        if not self.pid:
            self.pid = self._read()["ready"]
        return self.pid

    def _read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise WorkerError(f"worker exited with code {self._proc.wait()}")
        return json.loads(line)

    def send(self, op: str, **args: Any) -> None:
        """Send a command without waiting (pair with result(), to run workers at once)."""
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps({"op": op, "args": args}) + "\n")
        self._proc.stdin.flush()

    def result(self) -> Any:
        """The reply to the oldest command sent; raises WorkerError on its failure."""
        reply = self._read()
        if "error" in reply:
            raise WorkerError(f"{reply['error']}\n{reply['trace']}")
        return reply["ok"]

    def call(self, op: str, **args: Any) -> Any:
        """Send one command and wait for its reply."""
        self.send(op, **args)
        return self.result()

    def close(self) -> None:
        """End the worker (EOF on stdin) and wait for it."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> None:
    """Command line: python -m tests.servers.store_worker HOST PORT USER CACHE_DIR."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("user")
    parser.add_argument("cache_dir", type=Path)
    args = parser.parse_args(argv)
    serve(args.host, args.port, args.user, args.cache_dir)


if __name__ == "__main__":
    main()
