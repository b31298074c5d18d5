"""The built-in model's replies: first token and tokens/s, gated against always-retrieve.

Part of the real-local-model section (bench/local_model_bench.py, which starts the model
once): a short prompt with no memories, then the scripted demo conversation gated (local
gate) and always-retrieve (top 5, no cut-off, as memory products do), interleaved turn by
turn. Each turn's memories carry a fresh note (`FreshNotes`), so llama.cpp's prompt cache
cannot reuse a turn's memories; it can reuse the conversation before them, in both.
"""

from __future__ import annotations

import random
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.figures import latency

SHORT_PROMPTS = (
    "Tell me a joke.",
    "What's 2+2?",
    "Name a colour.",
    "Say hello in French.",
    "What is the capital of Peru?",
    "Give me one word that rhymes with cat.",
    "What day comes after Monday?",
    "Suggest a name for a goldfish.",
)


class FreshNotes:
    """A store whose search results carry a new note each turn, so no prompt is ever reused."""

    def __init__(self, store: Any, rng: random.Random, min_similarity: float | None = None) -> None:
        self._store = store
        self._rng = rng
        self._min_similarity = min_similarity  # None: the store's relevance cut-off

    def search(self, query: str, k: int = 5, min_similarity: float | None = None) -> list[Any]:
        """The store's results, each text tagged with a note number never seen before."""
        cut = self._min_similarity if min_similarity is None else min_similarity
        found = self._store.search(query, k=k, min_similarity=cut)
        return [replace(m, text=f"{m.text} (note {self._rng.randrange(10**6)})") for m in found]

    def mentions(self, words: list[str], max_share: float = 0.2) -> list[str]:
        """The store's own answer: the vocabulary rule sees the same words as in the app."""
        return self._store.mentions(words, max_share)


def _stream_rate(result: Any) -> float | None:
    # Tokens after the first, over the time after the first: the steady streaming rate.
    if result.first_token_ms is None or result.output_tokens < 2:
        return None
    secs = (result.elapsed_ms - result.first_token_ms) / 1000.0
    return (result.output_tokens - 1) / secs if secs > 0 else None


def run_replies(
    settings: Any,
    client: Any,
    size: dict[str, int],
    seed: int,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """First token and tokens/s: a short prompt alone, and the demo conversation gated vs always."""
    from assistant.gates.registry import build_gate
    from assistant.gates.rules import always_gate
    from assistant.reply.respond import ModelResponder
    from assistant.turn.chat import Chat, TurnOptions
    from assistant.turn.pipeline import Pipeline
    from memory.persona import demo_conversation, seed_demo
    from memory.store import MemoryStore

    responder = ModelResponder(client, settings.chat_model, max_tokens=size["reply_tokens"])
    progress(f"short prompts with no memories ({size['short']})")
    short_first, short_rate = [], []
    for prompt in SHORT_PROMPTS[: size["short"]]:
        result = responder.reply(prompt, (), ())
        if result.first_token_ms is not None:
            short_first.append(result.first_token_ms)
        if (rate := _stream_rate(result)) is not None:
            short_rate.append(rate)
    out: dict[str, Any] = {
        "short_prompt_first_token": latency(short_first),
        "short_prompt_tokens_per_s": round(statistics.median(short_rate), 1) if short_rate else 0,
    }
    conversation = demo_conversation()[: size["turns"]]
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore.persistent(Path(tmp) / "mem", "bench")
        store.warm()
        seed_demo(store)
        local = build_gate("local", settings, None)
        # always: what mem0, Zep and ChatGPT memory do, the top k on every turn with no
        # relevance cut-off (as in the pipeline bench); gated: the app, cut-off included.
        variants = {
            "gated": Chat.fixed(
                Pipeline(gate=local, store=FreshNotes(store, rng), responder=responder)
            ),
            "always": Chat.fixed(
                Pipeline(
                    gate=always_gate(), store=FreshNotes(store, rng, -1.0), responder=responder
                )
            ),
        }
        history: dict[str, list[Any]] = {name: [] for name in variants}
        first: dict[str, dict[bool, list[float]]] = {n: {True: [], False: []} for n in variants}
        rates: dict[str, list[float]] = {name: [] for name in variants}
        searched: dict[str, int] = dict.fromkeys(variants, 0)
        injected: dict[str, int] = dict.fromkeys(variants, 0)  # memory tokens, no-need turns
        progress(f"demo conversation, {len(conversation)} turns, gated and always in turn")
        for message, needs in conversation:
            for name, chat in variants.items():  # interleaved: both see the same load
                exchange = chat.answer(message, history[name], TurnOptions(capture=False))
                history[name].append(exchange)
                turn = exchange.gated
                searched[name] += turn.searched
                injected[name] += 0 if needs else turn.usage.memory_tokens
                if turn.timings.first_token_ms is not None:
                    first[name][needs].append(turn.timings.first_token_ms)
                rate = _stream_rate_turn(turn)
                if rate is not None:
                    rates[name].append(rate)
    for name in variants:
        out[name] = {
            "first_token_no_memory_needed": latency(first[name][False]),
            "first_token_memory_needed": latency(first[name][True]),
            "first_token_all": latency(first[name][False] + first[name][True]),
            "tokens_per_s": round(statistics.median(rates[name]), 1) if rates[name] else 0,
            "searches": searched[name],
            "memory_tokens_no_memory_needed": injected[name],
        }
    gated = out["gated"]["first_token_no_memory_needed"]["p50_ms"]
    always = out["always"]["first_token_no_memory_needed"]["p50_ms"]
    out["turns"] = len(conversation)
    out["ratio_first_token_always_over_gated_no_memory_needed"] = round(
        always / max(gated, 1e-6), 2
    )
    return out


def _stream_rate_turn(turn: Any) -> float | None:
    first, reply = turn.timings.first_token_ms, turn.timings.reply_ms
    if first is None or turn.usage.chat_output < 2:
        return None
    # timings.first_token_ms counts from the turn's start; the reply began after gate+search.
    streaming_s = (reply - (first - turn.timings.gate_ms - turn.timings.search_ms)) / 1000.0
    return (turn.usage.chat_output - 1) / streaming_s if streaming_s > 0 else None
