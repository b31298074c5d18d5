"""Score a retrieval gate on labelled messages: accuracy, precision, recall, F1, latency.

Input is JSONL, one `{"message": str, "retrieve": bool | null}` per line, read by
`assistant.gates.labels`: lines whose label is null are skipped and extra keys are ignored.
"Positive" means retrieve, so recall is the share of messages that needed memory and got it
(a miss loses a memory).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.config import GateMode
from assistant.eval.stats import percentile
from assistant.gates.labels import DataError, Row, read_rows


def score(labels: Iterable[bool], predictions: Iterable[bool], ms: Iterable[float]) -> dict:
    """The summary figures for paired labels, predictions and per-decision latencies."""
    labels, predictions, ms = list(labels), list(predictions), list(ms)
    tp = sum(y and p for y, p in zip(labels, predictions, strict=True))
    fp = sum((not y) and p for y, p in zip(labels, predictions, strict=True))
    fn = sum(y and not p for y, p in zip(labels, predictions, strict=True))
    n = len(labels)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    correct = sum(y == p for y, p in zip(labels, predictions, strict=True))
    return {
        "n": n,
        "accuracy": round(correct / n, 4) if n else 0.0,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "p50_ms": round(percentile(ms, 0.50), 3),
        "p95_ms": round(percentile(ms, 0.95), 3),
        "skip_rate": round(sum(not p for p in predictions) / n, 4) if n else 0.0,
    }


@dataclass
class GateUnderTest:
    """A gate built for an evaluation, with which model decides and where it runs."""

    gate: Any
    model: str | None = None
    endpoint: str | None = None
    local: Any = None  # the LocalModel this evaluation started, stopped by close()

    def close(self) -> None:
        """Stop a local model server this evaluation started."""
        if self.local is not None:
            self.local.stop()


def make_gate(mode: str, env: dict[str, str] | None = None) -> GateUnderTest:
    """Build the gate for a mode; with no key, model modes run on the local llama.cpp model."""
    from assistant.config import Settings
    from assistant.gates.registry import build_gate

    settings = Settings.from_env(env)
    client = None
    model = endpoint = local = None
    if GateMode(mode).needs_model:
        if settings.wants_local_model:
            from assistant.eval.local_server import ModelNotReady, start_local

            try:
                running = start_local(settings, say=True)
            except ModelNotReady as exc:
                print(f"error: {exc}", file=sys.stderr)
                raise SystemExit(2) from None
            settings, local = running.settings, running.local
            model = f"{running.name} (local GGUF)"
        elif not settings.model_configured:
            print(
                f"error: --gate {mode} calls a model: set ANTHROPIC_API_KEY or "
                "ANTHROPIC_BASE_URL, or unset MEMGATE_LOCAL_MODEL (it is 'off') to use the "
                "local model",
                file=sys.stderr,
            )
            raise SystemExit(2)
        else:
            model = settings.gate_model
        from assistant.runtime.llm import make_client

        client = make_client(settings)
        endpoint = settings.endpoint_host
    gate = build_gate(mode, settings, client)
    warm = getattr(gate, "warm", None) or getattr(getattr(gate, "local", None), "warm", None)
    if warm is not None:
        warm()  # load the model before timing: latency figures are per warm decision
    return GateUnderTest(gate, model, endpoint, local)


def _progress(done: int, total: int, started: float) -> None:
    # Model gates take seconds a message: say how far along a long run is, on stderr.
    if total >= 50 and (done % max(1, total // 20) == 0 or done == total):
        secs = time.perf_counter() - started
        eta = secs / done * (total - done)
        print(f"  {done}/{total} messages · {secs:.0f} s · ~{eta:.0f} s left", file=sys.stderr)


def evaluate(gate: Any, rows: list[Row], by: str | None = None, progress: bool = False) -> dict:
    """Run the gate over the rows and score it, overall and per value of field `by`."""
    predictions, latencies = [], []
    failed_open = 0
    run_started = time.perf_counter()
    for done, row in enumerate(rows, 1):
        started = time.perf_counter()
        decision = gate.decide(row.message)
        latencies.append((time.perf_counter() - started) * 1000.0)
        predictions.append(decision.retrieve)
        failed_open += decision.failed_open
        if progress:
            _progress(done, len(rows), run_started)
    result = score([r.retrieve for r in rows], predictions, latencies)
    # A gate that fails open "retrieves": counted apart, so its recall isn't mistaken for skill.
    result["failed_open"] = failed_open
    if hasattr(gate, "llm_calls"):
        result["llm_calls"] = gate.llm_calls
    if by:
        groups: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            groups.setdefault(str(row.fields.get(by, "(none)")), []).append(i)
        result["by_" + by] = {
            key: score(
                [rows[i].retrieve for i in idx],
                [predictions[i] for i in idx],
                [latencies[i] for i in idx],
            )
            for key, idx in sorted(groups.items())
        }
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register the gate evaluation's options."""
    parser.add_argument("file", type=Path, help="JSONL with message and retrieve")
    parser.add_argument(
        "--gate", choices=tuple(GateMode), default=GateMode.LOCAL.value, help="gate mode to score"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--by", metavar="FIELD", help="also break down by this field (source)")
    parser.add_argument("--split", help="keep only rows whose 'split' field has this value")


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; 2 on bad input or a missing model configuration."""
    try:
        rows, skipped = read_rows(args.file, args.split)
    except (OSError, DataError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not rows:
        print(f"error: {args.file} has no labelled messages", file=sys.stderr)
        return 2
    try:
        under_test = make_gate(args.gate)
    except SystemExit as exc:
        return int(exc.code or 2)
    try:
        result = evaluate(under_test.gate, rows, args.by, progress=True)
    finally:
        under_test.close()
    result = {
        "gate": args.gate,
        "model": under_test.model,
        "endpoint": under_test.endpoint,
        **result,
        "skipped_null_labels": skipped,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"gate={args.gate} file={args.file} n={result['n']} (null labels skipped: {skipped})")
    if under_test.model:
        print(f"model={under_test.model} endpoint={under_test.endpoint}")
    print(f"failed open: {result['failed_open']} of {result['n']} decisions")
    header = f"{'':16} {'n':>5} {'acc':>6} {'prec':>6} {'recall':>6} {'f1':>6} {'p50ms':>7}"
    print(header)
    groups = {"all": result, **result.get(f"by_{args.by}", {})} if args.by else {"all": result}
    for name, r in groups.items():
        print(
            f"{name[:16]:16} {r['n']:>5} {r['accuracy']:>6.3f} {r['precision']:>6.3f} "
            f"{r['recall']:>6.3f} {r['f1']:>6.3f} {r['p50_ms']:>7.2f}"
        )
    return 0
