"""The real local model: gates on Qwen2.5-Coder-1.5B, and replies gated vs always-retrieve.

Everything here runs against llama.cpp on 127.0.0.1 with the default model (the app's own
no-key setup, started once), so these are the figures a presenter sees on this machine:

- gates: the local gate, the LLM gate with the seed's exact prompt, the LLM gate as the
  registry builds it for a local endpoint, and cascade, on a stratified sample of the
  external set (by source) and of our own unseen sets (by kind);
- replies (bench/local_model_replies.py): first token and tokens/s on a short prompt with
  no memories, and on the scripted demo conversation gated (local gate) vs always-retrieve
  (top 5, no cut-off, as memory products do).

Skipped, with a line saying why, when the model parts are not installed.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assistant.eval.gate_eval import evaluate
from assistant.gates.labels import Row, read_rows
from bench.figures import load_average, table_head, table_row
from bench.gate_report import DATA_DIR, DEFAULT_EVAL_DIR, FRESH_SETS
from bench.local_model_replies import run_replies

SEED = 11  # the samples are the same on every run


def _sizes(quick: bool, overrides: dict[str, int] | None = None) -> dict[str, int]:
    # quick: 12 gate messages and a 3-turn conversation, so `make bench-quick` stays short.
    if quick:
        size = {"per_source": 1, "per_kind": 0, "own_total": 6, "turns": 3, "short": 3}
        size["seed_prompt"] = 0  # the seed-prompt row only in full runs: it doubles LLM time
        size["reply_tokens"] = 48  # enough for a tokens/s figure, short enough for the run
    else:
        size = {"per_source": 8, "per_kind": 2, "own_total": 0, "turns": 20, "short": 6}
        size["seed_prompt"] = 1
        size["reply_tokens"] = 128
    return {**size, **(overrides or {})}


def gate_samples(size: dict[str, int]) -> dict[str, list[Row]]:
    """Stratified samples: the external set by source, our unseen sets by kind."""
    rng = random.Random(SEED)
    external = read_rows(DEFAULT_EVAL_DIR / "gate_external.jsonl")[0]
    by_source: dict[str, list[Row]] = {}
    for row in external:
        by_source.setdefault(str(row.fields.get("source")), []).append(row)
    ext = [r for key in sorted(by_source) for r in rng.sample(by_source[key], size["per_source"])]
    own_all: list[Row] = []
    for name, file in FRESH_SETS:  # the gate report's unseen sets, never trained on
        for row in read_rows(DATA_DIR / file, split=name)[0]:
            row.fields["source"] = f"{name}/{row.fields.get('kind')}"
            own_all.append(row)
    by_kind: dict[str, list[Row]] = {}
    for row in own_all:
        by_kind.setdefault(str(row.fields["source"]), []).append(row)
    if size["per_kind"]:
        own = [r for k in sorted(by_kind) for r in rng.sample(by_kind[k], size["per_kind"])]
    else:  # quick: half that need memory, half that don't
        pos = [r for r in own_all if r.retrieve]
        neg = [r for r in own_all if not r.retrieve]
        half = size["own_total"] // 2
        own = rng.sample(pos, half) + rng.sample(neg, size["own_total"] - half)
    rng.shuffle(ext)
    rng.shuffle(own)
    return {"external": ext, "own_unseen": own}


def model_missing() -> str | None:
    """Why the default model cannot run here, or None when it can (assembling it if needed)."""
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        return "xllamacpp is not installed (pip install -e '.[local]')"
    from assistant.runtime.model_file import ModelFileError, assemble_default_model

    try:
        assemble_default_model()
    except ModelFileError as exc:
        return str(exc)
    return None


def _gates(settings: Any, client: Any, with_seed: bool) -> dict[str, Any]:
    from assistant.gates.llm import GATE_PROMPT, LlmGate
    from assistant.gates.registry import build_gate

    gates = {
        "local": build_gate("local", settings, None),
        "llm": build_gate("llm", settings, client),  # as the app builds it for this endpoint
    }
    if with_seed:  # the seed's exact prompt, on the same model and messages
        gates["llm (seed prompt)"] = LlmGate(
            client, settings.gate_model, timeout=settings.gate_timeout, prompt=GATE_PROMPT
        )
    gates["cascade"] = build_gate("cascade", settings, client)
    gates["local"].warm()
    return gates


def run_gates(
    settings: Any, client: Any, size: dict[str, int], progress: Callable[[str], None] = print
) -> dict[str, Any]:
    """Score every gate on both samples against the running local model."""
    samples = gate_samples(size)
    out: dict[str, Any] = {"n": {k: len(v) for k, v in samples.items()}}
    for set_name, rows in samples.items():
        per_gate: dict[str, Any] = {}
        for name, gate in _gates(settings, client, bool(size["seed_prompt"])).items():
            progress(f"gate {name} on {set_name} ({len(rows)} messages)")
            result = evaluate(gate, rows, by="source")
            calls = result.get("llm_calls", len(rows) if name.startswith("llm") else 0)
            per_gate[name] = {
                **{k: result[k] for k in ("n", "accuracy", "recall", "p50_ms", "p95_ms")},
                "failed_open": result["failed_open"],
                "failed_open_share": round(result["failed_open"] / max(result["n"], 1), 3),
                "llm_calls": calls,
            }
        per_gate["ratio_llm_over_local_p50"] = round(
            per_gate["llm"]["p50_ms"] / max(per_gate["local"]["p50_ms"], 1e-6), 1
        )
        out[set_name] = per_gate
    return out


def compare_prompts(
    size: dict[str, int], threads: int, timeout: float, progress: Callable[[str], None] = print
) -> dict[str, Any]:
    """The seed's exact prompt against LOCAL_GATE_PROMPT on the same unseen messages.

    Run apart from the section (`--prompts`), with its own server: on a busy machine a
    generous timeout and one thread let the model answer, so the prompts are judged on
    what the model says rather than on how loaded the cores are.
    """
    from assistant.config import Settings
    from assistant.eval.local_server import ModelNotReady, start_local
    from assistant.gates.llm import GATE_PROMPT, LOCAL_GATE_PROMPT, LlmGate
    from assistant.runtime.llm import make_client

    try:
        model = start_local(Settings(), threads=threads)
    except ModelNotReady as exc:
        return {"skipped": str(exc)}
    with model:
        client = make_client(model.settings)
        alias = model.settings.gate_model
        rows = [r for rows in gate_samples(size).values() for r in rows]
        out: dict[str, Any] = {
            "model": model.name, "threads": threads, "timeout_s": timeout, "n": len(rows),
            "load_average_before": load_average(),
        }  # fmt: skip
        for name, prompt in (("seed", GATE_PROMPT), ("local", LOCAL_GATE_PROMPT)):
            progress(f"prompt {name} on {len(rows)} unseen messages")
            gate = LlmGate(client, alias, timeout=timeout, prompt=prompt)
            result = evaluate(gate, rows, by="source")
            out[name] = {
                k: result[k] for k in ("n", "accuracy", "recall", "p50_ms", "p95_ms", "failed_open")
            }
        out["load_average_after"] = load_average()
        return out


def _prompt_name(settings: Any, client: Any) -> str:
    import assistant.gates.llm as gate
    from assistant.gates.registry import build_gate

    prompt = getattr(build_gate("llm", settings, client), "_prompt", None)
    names = {gate.GATE_PROMPT: "GATE_PROMPT"}
    if hasattr(gate, "LOCAL_GATE_PROMPT"):
        names[gate.LOCAL_GATE_PROMPT] = "LOCAL_GATE_PROMPT"
    return names.get(prompt, "a custom prompt")


def run(
    quick: bool = False,
    progress: Callable[[str], None] = print,
    sizes: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Start the default local model once, then take every figure in this one run."""
    size = _sizes(quick, sizes)
    missing = model_missing()
    if missing:
        return {"skipped": missing}
    from assistant.config import Settings
    from assistant.eval.local_server import ModelNotReady, start_local
    from assistant.runtime.llm import make_client

    # The app's no-key settings; only the gate's timeout may be raised (MEMGATE_GATE_TIMEOUT),
    # to judge the model's answers apart from a busy machine's delays.
    try:
        model = start_local(Settings(gate_timeout=Settings.from_env().gate_timeout))
    except ModelNotReady as exc:
        return {"skipped": str(exc)}
    with model:
        settings = model.settings
        results: dict[str, Any] = {
            "model": model.name,
            "model_ready_s": model.ready_s,
            "gate_timeout_s": settings.gate_timeout,
            "load_average_before": load_average(),
        }
        client = make_client(settings)
        results["llm_prompt"] = _prompt_name(settings, client)
        results["sizes"] = size
        results["gates"] = run_gates(settings, client, size, progress)
        results["replies"] = run_replies(settings, client, size, SEED, progress)
        results["load_average_after"] = load_average()
        return results


def _gate_table(per_gate: dict[str, Any]) -> list[str]:
    lines = table_head(
        "gate", "n", "accuracy", "recall", "p50 ms", "p95 ms", "failed open", "LLM calls"
    )
    for name, r in per_gate.items():
        if name.startswith("ratio"):
            continue
        lines.append(
            table_row(
                name,
                r["n"],
                f"{r['accuracy']:.3f}",
                f"{r['recall']:.3f}",
                f"{r['p50_ms']:.0f}",
                f"{r['p95_ms']:.0f}",
                f"{r['failed_open_share']:.0%}",
                r["llm_calls"],
            )
        )
    return lines


def markdown(results: dict[str, Any], plots: Path) -> str:
    """The report section: gates, replies, and what the figures say."""
    if "skipped" in results:
        return f"Not measured: {results['skipped']}"
    gates, replies = results["gates"], results["replies"]
    lines = [
        f"{results['model']} (Q4_K_M) in llama.cpp on 127.0.0.1, the app's no-key setup "
        f"(2 slots, 2 threads, the gate's {results['gate_timeout_s']:g} s timeout), ready in "
        f"{results['model_ready_s']:.1f} s. Load average (1/5/15 min) "
        f"{results['load_average_before']} at the start, {results['load_average_after']} "
        "at the end: this machine is shared, and llama.cpp slows down more than linearly "
        "when its cores are busy.",
        "",
        "## Gates on the real model",
        "",
    ]
    for set_name, title in (
        ("external", "External set, stratified by source"),
        ("own_unseen", "Our unseen sets (fresh to fresh8), stratified by set and kind"),
    ):
        g = gates[set_name]
        lines += [f"**{title}** (n = {gates['n'][set_name]}):", "", *_gate_table(g), ""]
        lines.append(
            f"The LLM gate is **{g['ratio_llm_over_local_p50']:.0f}x** slower than the "
            "local gate at the median, in the same run."
        )
        lines.append("")
    lines += [
        "A decision that failed open (timeout, no JSON, a reply cut off) counts as "
        "retrieve: its recall is not skill. `llm` is the gate as the app builds it for a "
        f"keyless endpoint (prompt: `{results.get('llm_prompt', '?')}`); "
        "`llm (seed prompt)` sends `should_retrieve`'s exact prompt (full runs only); "
        "`cascade` asks the `llm` gate only when the local gate is unsure.",
        "",
        "## Replies on the real model",
        "",
    ]
    short = replies["short_prompt_first_token"]
    lines += [
        f"Short prompt, no memories ({short['n']} prompts): first token p50 "
        f"**{short['p50_ms'] / 1000:.2f} s** (p95 {short['p95_ms'] / 1000:.2f} s; target "
        f"<= 1.0 s), streaming **{replies['short_prompt_tokens_per_s']:.1f} tokens/s** "
        "(target >= 20).",
        "",
        f"The scripted demo conversation ({replies['turns']} turns), gated (local gate, the "
        "app's relevance cut-off) and always-retrieve (the top 5 on every turn, no cut-off, "
        "as memory products do) interleaved turn by turn. Every retrieved memory carries a "
        "new note each turn, so the prompt cache cannot reuse a turn's memories; it can "
        "reuse the conversation before them, in both variants, because memories go with "
        "each message and the history is replayed as it was sent:",
        "",
        *table_head(
            "variant",
            "searches",
            "memory tokens on turns not needing memory",
            "first token p50, turns not needing memory",
            "turns needing memory",
            "all turns",
            "tokens/s",
        ),
    ]
    for name in ("gated", "always"):
        r = replies[name]
        no_memory = r["first_token_no_memory_needed"]
        lines.append(
            table_row(
                name,
                r["searches"],
                r.get("memory_tokens_no_memory_needed", "-"),
                f"{no_memory['p50_ms'] / 1000:.2f} s (n={no_memory['n']})",
                f"{r['first_token_memory_needed']['p50_ms'] / 1000:.2f} s",
                f"{r['first_token_all']['p50_ms'] / 1000:.2f} s",
                f"{r['tokens_per_s']:.1f}",
            )
        )
    ratio = replies["ratio_first_token_always_over_gated_no_memory_needed"]
    lines += [
        "",
        f"On turns that don't need memory, gating makes the first token **{ratio:.1f}x** "
        "sooner than always-retrieve (p50, same run; target >= 2x).",
    ]
    return "\n".join(lines)


# The sizes a command line may override (--per-source 3 ...).
SIZE_OPTIONS = ("per_source", "per_kind", "own_total", "turns", "short", "seed_prompt")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench local-model --help`)."""
    parser.add_argument("--quick", action="store_true", help="12 gate messages, 3 turns")
    for name in SIZE_OPTIONS:
        parser.add_argument("--" + name.replace("_", "-"), type=int, help="override a size")
    parser.add_argument("--prompts", action="store_true", help="only compare the gate prompts")
    parser.add_argument("--threads", type=int, default=1, help="with --prompts")
    parser.add_argument("--gate-timeout", type=float, default=60.0, help="with --prompts")
    parser.add_argument("--markdown", type=Path, help="also write the section here")


def command(args: argparse.Namespace) -> int:
    """Run this section alone, optionally smaller than a full run; print JSON, write markdown."""
    import json

    sizes = {k: v for k in SIZE_OPTIONS if (v := vars(args)[k]) is not None}

    def progress(line: str) -> None:
        print(line, file=sys.stderr)  # stdout is the JSON

    if args.prompts:
        size = _sizes(args.quick, sizes)
        result = compare_prompts(size, args.threads, args.gate_timeout, progress)
        print(json.dumps(result, indent=2))
        return 0
    results = run(quick=args.quick, sizes=sizes, progress=progress)
    print(json.dumps(results, indent=2))
    if args.markdown:
        args.markdown.write_text(markdown(results, args.markdown.parent) + "\n")
    return 0
