"""The LLM gate on the built-in model: valid, warm, short, and a cascade no worse than local.

One run, one llama.cpp server started the way the app starts it (so the warm-up on
"ready" is the app's own), then:
- the first `llm` decision after the start: its time, and whether it failed open;
- the gate table on the external set and our unseen sets: local and cascade on every
  message; the LLM gate as the app builds it (grammar, yes-no read from token
  probabilities, the measured threshold), the same server asked for the whole JSON under
  the grammar, and the way it was asked before (`LOCAL_GATE_PROMPT` through
  `/v1/messages`, no grammar) on a stratified sample;
- for every gate, what it changed against the local gate: flips right and flips wrong.

    python -m bench llm-gate [--quick] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assistant.eval.gate_eval import score
from assistant.gates.labels import Row, read_rows
from bench.figures import table_head, table_row
from bench.gate_report import DATA_DIR, DEFAULT_EVAL_DIR

SEED = 2112
UNSEEN = ("fresh8", "fresh9")  # fresh9 was written for issue 21 before any calibration
FIRST_MESSAGE = "What's 15 times 12?"
HELD_OUT_HALF = "external, held-out half"


def _sets(quick: bool) -> dict[str, list[Row]]:
    from bench.calibrate_llm_gate import external_half

    external = read_rows(DEFAULT_EVAL_DIR / "gate_external.jsonl")[0]
    sets = {"external": external}
    if not quick:  # the half the cascade's trust was never fitted on
        sets[HELD_OUT_HALF] = external_half(external, held_out=True)
    for name in UNSEEN:
        sets[name] = read_rows(DATA_DIR / f"gate_{name}_test.jsonl")[0]
    if quick:  # a few of each label, so bench-quick stays short
        rng = random.Random(SEED)
        sets = {
            name: rng.sample([r for r in rows if r.retrieve], 6)
            + rng.sample([r for r in rows if not r.retrieve], 6)
            for name, rows in sets.items()
        }
    return sets


def stratified(rows: list[Row], n: int, field: str) -> list[Row]:
    """About n rows, the same number from each value of `field` (seeded)."""
    rng = random.Random(SEED)
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(str(row.fields.get(field)), []).append(row)
    each = max(1, n // len(groups))
    return [
        r for key in sorted(groups) for r in rng.sample(groups[key], min(each, len(groups[key])))
    ]


def run_gate(gate: Any, rows: list[Row], local_says: dict[str, bool]) -> dict[str, Any]:
    """Score one gate on rows, with failed-open decisions and flips against the local gate."""
    predictions, ms = [], []
    failed = no_json = right = wrong = calls = 0
    from memory.embeddings import shared_model

    for row in rows:
        shared_model().clear_cache()  # the local scores embedded these rows: time the model
        started = time.perf_counter()
        decision = gate.decide(row.message)
        ms.append((time.perf_counter() - started) * 1000.0)
        predictions.append(decision.retrieve)
        failed += decision.failed_open
        calls += decision.called_model
        no_json += decision.failed_open and "JSON" in decision.reason
        if decision.retrieve != local_says[row.message]:
            right += decision.retrieve == row.retrieve
            wrong += decision.retrieve != row.retrieve
    result = score([r.retrieve for r in rows], predictions, ms)
    result.update(
        failed_open=failed,
        no_json=no_json,
        llm_calls=calls,
        flips_right=right,
        flips_wrong=wrong,
    )
    return result


def run(
    quick: bool = False, progress: Callable[[str], None] = print, old_n: int | None = None
) -> dict[str, Any]:
    """Start the built-in model as the app does, and measure every gate."""
    from assistant.config import Settings
    from assistant.eval.local_server import ModelNotReady, attach
    from assistant.gates.llm import LOCAL_GATE_PROMPT, LlmGate
    from assistant.gates.native import NativeLlamaGate
    from assistant.gates.trust import load_trust, trust_key
    from assistant.turn.factory import build_assistant
    from bench.local_model_bench import model_missing

    missing = model_missing()
    if missing:
        return {"skipped": missing}
    sets = _sets(quick)
    sample_n = 12 if quick else 60
    old_n = old_n or 30  # the slow ways of asking: fewer messages
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env().with_(memory_dir=Path(tmp) / "mem", user_id="bench")
        started = time.perf_counter()
        assistant = build_assistant(settings, seed_if_empty=False)
        if assistant.local is None:
            return {"skipped": "a key or an endpoint is set: the built-in model did not start"}
        try:
            model = attach(assistant.local, assistant.settings, started=started)
        except ModelNotReady as exc:
            return {"skipped": str(exc)}
        with model:
            llm = assistant.gate("llm")
            first = llm.decide(FIRST_MESSAGE)
            out: dict[str, Any] = {
                "model": model.name,
                "gate_timeout_s": assistant.settings.gate_timeout,
                "load_average_before": os.getloadavg(),
                "ready_s": model.ready_s,
                "first_decision": {
                    "message": FIRST_MESSAGE,
                    "ms": round(first.elapsed_ms, 1),
                    "failed_open": first.failed_open,
                    "reason": first.reason,
                },
                "trust": vars(load_trust(trust_key(assistant.settings))),
            }
            s = assistant.settings
            gates = {
                "local": assistant.gate("local"),
                "cascade": assistant.gate("cascade"),
                "llm": llm,
            }
            if not quick:  # the old ways often run into the 5 s timeout: full runs only
                gates["llm, whole JSON"] = NativeLlamaGate(
                    s.native_url or "", timeout=s.gate_timeout, threshold=llm.threshold
                )
                gates["llm, before (no grammar)"] = LlmGate(
                    assistant.client, s.gate_model, timeout=s.gate_timeout, prompt=LOCAL_GATE_PROMPT
                )
            gates["local"].warm()
            for set_name, rows in sets.items():
                local_says = dict(
                    zip(
                        [r.message for r in rows],
                        gates["local"].retrieves([r.message for r in rows]),
                        strict=True,
                    )
                )
                by = "source" if set_name.startswith("external") else "kind"
                sample = stratified(rows, sample_n, by)
                per: dict[str, Any] = {"n": len(rows), "n_sample": len(sample)}
                for name, gate in gates.items():
                    if name in ("local", "cascade"):
                        these = rows
                    elif name == "llm":
                        these = sample
                    else:
                        these = stratified(rows, old_n, by)
                    progress(f"{name} on {set_name} ({len(these)} messages)")
                    per[name] = run_gate(gate, these, local_says)
                    if these is not rows:  # local on the same rows, for a fair comparison
                        per[name]["local_on_same"] = run_gate(gates["local"], these, local_says)
                out[set_name] = per
            out["load_average_after"] = os.getloadavg()
    return out


def _row(name: str, r: dict[str, Any]) -> str:
    same = r.get("local_on_same")
    vs = f" (local {same['accuracy']:.3f} / {same['recall']:.3f})" if same else ""
    return table_row(
        name,
        r["n"],
        f"{r['accuracy']:.3f}{vs}",
        f"{r['recall']:.3f}",
        f"{r['p50_ms']:,.0f} / {r['p95_ms']:,.0f}",
        f"{r['failed_open']} ({r['no_json']})",
        r["llm_calls"],
        f"{r['flips_right']} / {r['flips_wrong']}",
    )


def markdown(results: dict[str, Any], plots_dir: Path | None = None) -> str:
    """The section for docs/benchmarks.md."""
    if "skipped" in results:
        return f"Not measured: {results['skipped']}"
    first = results["first_decision"]
    trust = results["trust"]
    lines = [
        f"{results['model']} in llama.cpp, started as the app starts it (ready in "
        f"{results['ready_s']:.0f} s, the gate's prompt read once on ready); gate timeout "
        f"{results['gate_timeout_s']:g} s; load average (1/5/15 min) "
        f"{tuple(round(x, 1) for x in results['load_average_before'])} at the start and "
        f"{tuple(round(x, 1) for x in results['load_average_after'])} at the end "
        "(on a busy machine llama.cpp slows down more than linearly).",
        "",
        f'First `llm` decision after the start ("{first["message"]}"): '
        f"**{first['ms']:,.0f} ms**, {'FAILED OPEN' if first['failed_open'] else 'not failed open'}"
        f" ({first['reason']}).",
        "",
        f"Trust measured for this model on held-out sets (`python -m bench calibrate-llm-gate`): "
        f"style `{trust['style']}`, threshold on P(true) {trust['threshold']:.2f}, cascade "
        f"band {trust['band']} logits, weight {trust['weight']:g}.",
        "",
    ]
    for set_name in ("external", HELD_OUT_HALF, *UNSEEN):
        if set_name not in results:
            continue
        per = results[set_name]
        lines += [
            f"**{set_name}** ({per['n']} messages; sampled rows give the local gate's score "
            "on the same rows beside accuracy):",
            "",
            *table_head(
                "gate",
                "n",
                "accuracy",
                "recall",
                "p50 / p95 ms",
                "failed open (no JSON)",
                "LLM calls",
                "flips right / wrong vs local",
            ),
        ]
        lines += [_row(name, per[name]) for name in per if isinstance(per[name], dict)]
        lines.append("")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench llm-gate --help`)."""
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--old-n", type=int, help="messages per set for the slow ways of asking")


def command(args: argparse.Namespace) -> int:
    """Run this section alone; print JSON, optionally write the markdown."""
    import json

    results = run(args.quick, lambda line: print(line, file=sys.stderr), args.old_n)
    text = json.dumps(results, indent=2, default=str)
    print(text)
    if args.json:
        args.json.write_text(text)
    if args.markdown:
        args.markdown.write_text(markdown(results) + "\n")
    return 0
