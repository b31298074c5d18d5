"""A bounded load run: N concurrent sessions through the offline pipeline, turns/s, p50/p95.

Offline mode (local gate, offline responder, embedded Chroma in a temporary folder)
touches no network at all: every turn runs on this machine. The run stops by itself
after --seconds. Each session replays the demo persona's scripted conversation.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from assistant.eval.stats import percentile
from memory.persona import demo_conversation


@dataclass
class LoadResult:
    """What a load run measured."""

    sessions: int
    seconds: float
    turns: int
    errors: int
    turns_per_second: float
    p50_ms: float
    p95_ms: float
    first_error: str | None = None


def run_load(sessions: int = 8, seconds: float = 10.0, max_turns: int = 100_000) -> LoadResult:
    """Drive `sessions` threads through the scripted conversation until time is up."""
    from assistant.config import Settings
    from assistant.turn.chat import Exchange, TurnOptions
    from assistant.turn.factory import build_assistant

    conversation = [message for message, _ in demo_conversation()]

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            memory_dir=Path(tmp) / "mem", user_id="load", gate_mode="local", local_model="off"
        )
        assistant = build_assistant(settings)  # offline: no key, no base URL
        assistant.warm()
        alone = TurnOptions(capture=False)
        latencies: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()
        deadline = time.perf_counter() + seconds
        budget = threading.Semaphore(max_turns)  # a hard cap on work, whatever the clock does

        def session(n: int) -> None:
            history: list[Exchange] = []
            i = n  # each session starts at a different point of the conversation
            while time.perf_counter() < deadline and budget.acquire(blocking=False):
                # A tag makes every message new, so no turn is served from the embedding cache.
                message = f"{conversation[i % len(conversation)]} [s{n} t{i}]"
                started = time.perf_counter()
                try:
                    exchange = assistant.answer(message, history[-8:], alone)
                    if exchange.gated.error:
                        raise RuntimeError(exchange.gated.error)
                    history.append(exchange)
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                with lock:
                    latencies.append((time.perf_counter() - started) * 1000.0)
                i += 1

        started = time.perf_counter()
        threads = [threading.Thread(target=session, args=(n,)) for n in range(sessions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - started
    ordered = sorted(latencies) or [0.0]
    return LoadResult(
        sessions=sessions,
        seconds=round(elapsed, 2),
        turns=len(latencies),
        errors=len(errors),
        turns_per_second=round(len(latencies) / elapsed, 1),
        p50_ms=round(statistics.median(ordered), 2),
        p95_ms=round(percentile(ordered, 0.95), 2),
        first_error=errors[0] if errors else None,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `python -m assistant.eval load`."""
    parser.add_argument("--sessions", type=int, default=8, help="concurrent sessions (8)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to run (10)")


def run(args: argparse.Namespace) -> int:
    """Print the figures as JSON; exit 1 when any turn failed."""
    result = run_load(args.sessions, args.seconds)
    print(json.dumps(asdict(result), indent=2))
    return 1 if result.errors else 0
