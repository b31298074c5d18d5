"""Compare mode's clock on the built-in model: a scripted conversation, ratio per exchange.

Compare mode answers each message twice, "gated" and "always retrieve", and shows both
first-token times. Those times are only worth showing if each twin pays what its mode costs
in a real conversation: its own history, already read by the model, plus this message and
its memories. This script plays a scripted conversation through the app's own assistant
(`build_assistant`: the built-in Qwen2.5 1.5B in llama.cpp, the app's gate, responder and
capture, the demo persona in a fresh store) with compare mode on, and prints per exchange:
memory tokens each twin sent, prompt tokens each read anew and took from llama.cpp's cache,
first-token ms each, and the ratio gated / always. The token counts do not move with the
machine's load; the times do, so compare twins within one run, on a quiet machine.

Targets (issue 29): where both twins searched and sent the same memory tokens, the two
times are within 2x of each other; where the gated twin skipped or sent fewer, it is never
shown slower than 1.25x always-retrieve.

    python -m bench compare            # 10 exchanges, the app's default gate
    python -m bench compare --quick    # the first 4
    python -m bench compare --gate llm --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.figures import load_average, median, table_head, table_row

# Memory questions, follow-ups, general questions and small talk, as a presenter talks.
CONVERSATION = (
    "When am I meeting Alex?",
    "What time?",
    "What's the capital of France?",
    "Plan my weekend",
    "Tell me a joke.",
    "What should I get Jordan for their birthday?",
    "What's 17 * 23?",
    "When is my dentist appointment?",
    "Who is my manager?",
    "Thanks, that helps!",
)
SAME_WITHIN = 2.0  # same memory tokens: the slower twin within 2x of the faster
LESS_AT_MOST = 1.25  # gated sent fewer: gated at most 1.25x always-retrieve


def verdict(
    gated_searched: bool, gated_tokens: int, always_tokens: int, gated_ms: float, always_ms: float
) -> str:
    """'ok' or 'FAIL' against the targets, or '-' where no target applies (gated sent more).

    A skip is "sent less" even when the search would have found nothing: the always twin
    still searched, and its message carried a note saying nothing was found.
    """
    if gated_searched and gated_tokens == always_tokens:
        slow, fast = max(gated_ms, always_ms), min(gated_ms, always_ms)
        return "ok" if slow <= SAME_WITHIN * max(fast, 1e-9) else "FAIL"
    if not gated_searched or gated_tokens < always_tokens:
        return "ok" if gated_ms <= LESS_AT_MOST * always_ms else "FAIL"
    return "-"


class ReadLog:
    """What llama.cpp says each pinned reply read: prompt tokens, and how many its cache held.

    Times move with the machine's load; these counts do not. Where both twins read about as
    many new tokens, the clock compares like with like, whatever the times say.
    """

    def __init__(self) -> None:
        self.reads: dict[int, tuple[int, int | None]] = {}  # slot -> (prompt, cached)

    def install(self) -> None:
        """Record every pinned reply's counts (the bench's own tap on SlotApi.stream)."""
        from assistant.runtime.llama_slot import SlotApi

        stream = SlotApi.stream
        reads = self.reads

        def recorded(api: SlotApi, *args: Any, **kwargs: Any) -> Any:
            done = stream(api, *args, **kwargs)
            reads[api.slot] = (done.input_tokens, done.cached_tokens)
            return done

        SlotApi.stream = recorded  # type: ignore[method-assign]

    def take(self, slot: int) -> tuple[int | None, int | None]:
        """(new tokens read, tokens from the cache) of the slot's last reply, once."""
        prompt, cached = self.reads.pop(slot, (None, None))
        if prompt is None or cached is None:
            return None, None
        return prompt - cached, cached


def _row(number: int, exchange: Any, reads: ReadLog) -> dict[str, Any]:
    from assistant.runtime.local_model import ALWAYS_SLOT, GATED_SLOT

    gated, always = exchange.gated, exchange.always
    g_ms, a_ms = gated.timings.first_token_ms, always.timings.first_token_ms
    g_tok, a_tok = gated.usage.memory_tokens, always.usage.memory_tokens
    timed = g_ms is not None and a_ms is not None
    g_new, g_cached = reads.take(GATED_SLOT)
    a_new, a_cached = reads.take(ALWAYS_SLOT)
    return {
        "n": number,
        "message": exchange.message,
        "first": "always" if exchange.always_ran_first else "gated",
        "gated_retrieved": gated.decision.retrieve,
        "gate_ms": round(gated.timings.gate_ms),  # part of the gated twin's first token
        "gated_memory_tokens": g_tok,
        "always_memory_tokens": a_tok,
        "gated_first_token_ms": None if g_ms is None else round(g_ms),
        "always_first_token_ms": None if a_ms is None else round(a_ms),
        "gated_new_tokens": g_new,
        "gated_cached_tokens": g_cached,
        "always_new_tokens": a_new,
        "always_cached_tokens": a_cached,
        "ratio": round(g_ms / max(a_ms, 1e-9), 2) if timed else None,
        "verdict": verdict(gated.searched, g_tok, a_tok, g_ms, a_ms) if timed else "no reply",
        "errors": [t.error for t in (gated, always) if t.error],
    }


def run(
    quick: bool = False,
    gate_mode: str | None = None,
    messages: Sequence[str] | None = None,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Play `messages` in compare mode through the app's own assistant; one row per exchange.

    quick (`make bench-quick`): the first four exchanges, two of them on the same memories.
    """
    from assistant.config import Settings
    from assistant.eval.local_server import ModelNotReady, attach
    from assistant.page.session import compare_medians
    from assistant.runtime.model_file import default_model_installed
    from assistant.turn.chat import TurnOptions
    from assistant.turn.factory import build_assistant

    if not default_model_installed():
        return {"skipped": "the built-in model's parts are not installed (make demo does it)"}
    if messages is None:
        messages = CONVERSATION[:4] if quick else CONVERSATION

    with tempfile.TemporaryDirectory() as tmp:
        # The app's settings with no key (so the built-in model starts) and a fresh store.
        env = {"MEMGATE_MEMORY_DIR": str(Path(tmp) / "memory")}
        if gate_mode:
            env["MEMGATE_GATE_MODE"] = gate_mode
        reads = ReadLog()
        reads.install()
        load_before = load_average()
        started = time.perf_counter()
        assistant = build_assistant(Settings.from_env(env))
        try:  # a key or an endpoint in the environment: no local model to wait for
            model = attach(assistant.local, assistant.settings, started=started)
        except ModelNotReady as exc:
            return {"skipped": str(exc)}
        with model or contextlib.nullcontext():
            progress(f"model ready in {time.perf_counter() - started:.1f} s")
            assistant.warm()
            options = TurnOptions(gate_mode=gate_mode, compare=True)
            progress(HEADER)
            history: list[Any] = []
            rows = []
            for number, message in enumerate(messages, start=1):
                exchange = assistant.chat.answer(message, history, options)
                history.append(exchange)
                if exchange.always is None:
                    rows.append({"n": number, "message": message, "verdict": "failed",
                                 "errors": [exchange.gated.error]})  # fmt: skip
                    continue
                rows.append(_row(number, exchange, reads))
                progress(line(rows[-1]))
            medians = compare_medians(history)
            gate = assistant.pipeline.gate.name if gate_mode is None else gate_mode
    checked = [r for r in rows if r["verdict"] in ("ok", "FAIL")]
    return {
        "model": model.name if model is not None else "offline",
        "gate": gate,
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "exchanges": rows,
        "median_gated_first_token_ms": medians.gated_first_token_ms,
        "median_always_first_token_ms": medians.always_first_token_ms,
        "median_ratio": median([r["ratio"] for r in rows if r.get("ratio") is not None]),
        "targets_met": sum(r["verdict"] == "ok" for r in checked),
        "targets_checked": len(checked),
    }


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _read(new: int | None, cached: int | None) -> str:
    return "?" if new is None else f"{new} (+{cached})"


def line(row: dict[str, Any]) -> str:
    """One exchange as a table row."""
    if "ratio" not in row:
        return table_row(row["n"], row["message"][:40], f"failed: {row['errors']}")
    decision = "retrieved" if row["gated_retrieved"] else "skipped"
    return table_row(
        row["n"],
        row["message"][:40],
        row["first"],
        decision,
        f"{row['gated_memory_tokens']} / {row['always_memory_tokens']}",
        f"{_read(row['gated_new_tokens'], row['gated_cached_tokens'])} / "
        f"{_read(row['always_new_tokens'], row['always_cached_tokens'])}",
        _ms(row["gated_first_token_ms"]),
        _ms(row["always_first_token_ms"]),
        "–" if row["ratio"] is None else row["ratio"],
        row["verdict"],
    )


HEADER = "\n".join(
    table_head(
        "#",
        "message",
        "ran first",
        "gated",
        "memory tokens gated / always",
        "prompt tokens read (+ from cache) gated / always",
        "first token gated ms",
        "first token always ms",
        "ratio gated/always",
        "target",
        align="rlllrrrrrl",
    )
)


def markdown(results: dict[str, Any], plots: Path | None = None) -> str:
    """The table, the medians and how many exchanges met the targets."""
    if "skipped" in results:
        return f"Skipped: {results['skipped']}\n"
    rows = "\n".join(line(r) for r in results["exchanges"])
    return (
        f"Model {results['model']}, gate `{results['gate']}`, compare mode; load average "
        f"{results['load_average_before']} before, {results['load_average_after']} after.\n\n"
        f"{HEADER}\n{rows}\n\n"
        f"Median first token: gated {_ms(results['median_gated_first_token_ms'])} ms, "
        f"always-retrieve {_ms(results['median_always_first_token_ms'])} ms; "
        f"median ratio {results['median_ratio']}. Targets met on "
        f"{results['targets_met']} of {results['targets_checked']} exchanges "
        f"(both searched, same memory tokens: within {SAME_WITHIN:g}x; gated skipped or sent "
        f"fewer: at most "
        f"{LESS_AT_MOST:g}x always).\n"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench compare --help`)."""
    parser.add_argument("--gate", default=None, help="gate mode (default: the app's)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--quick", action="store_true", help="the first four exchanges only")


def command(args: argparse.Namespace) -> int:
    """Run the scripted conversation and print the table (and write JSON if asked)."""
    results = run(args.quick, args.gate, progress=lambda text: print(text, flush=True))
    print()
    print(markdown(results).rsplit("\n\n", 1)[-1])
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0
