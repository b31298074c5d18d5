"""Measure how far the built-in model's LLM gate can be trusted, and file it per model.

    python -m bench calibrate-llm-gate [--url http://127.0.0.1:PORT] [--sets fresh2,...]

On held-out messages (our dev sets: never trained on, already read), it asks the model
for P(retrieve) through the native gate's yes-no style and fits, in this order:
1. the LLM gate's threshold on P(true): the one with the best accuracy on a random sample;
2. the cascade's trust: among bands (in logits of the local gate's threshold) and weights
   of the LLM's vote, the pair with the most net right flips over the local gate alone,
   and no loss of recall. None that gains: weight 0, so the cascade never asks the LLM.
The result goes to assistant/data/llm_trust.json under the model's file name, with the
held-out scores the sidebar quotes. The unseen sets are scored by `make bench`, not here.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.eval.gate_eval import score
from assistant.gates.labels import Row, read_rows
from assistant.gates.trust import LlmTrust, logit, save_trust, trust_key
from bench.gate_report import DATA_DIR, DEFAULT_EVAL_DIR

# Our dev sets, and half the external set: real people's words, which ours lack. The
# other half (`external_half(rows, held_out=True)`) is scored by the bench, never fitted.
DEV_SETS = ("fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "external-a")
WIDEST_BAND = 3.0  # logits either side of the local threshold that are asked at all
BANDS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
WEIGHTS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 1e6)
MIN_NET_GAIN = 2  # right flips minus wrong flips on the dev band, to trust the LLM at all
SEED = 7


@dataclass(frozen=True)
class Asked:
    """One held-out message: its label, the local gate's P and margin, the LLM's P(true)."""

    label: bool
    p_local: float
    margin: float  # logit(p_local) - logit(local threshold)
    local_retrieves: bool
    p_llm: float | None
    ms: float


def flips(
    rows: list[Asked], band: float, weight: float, threshold: float
) -> tuple[int, int, int, int]:
    """(right, wrong, positives won, positives lost): the combined vote against local alone."""
    right = wrong = won = lost = 0
    for r in rows:
        if r.p_llm is None or abs(r.margin) >= band:
            continue
        combined = r.margin + weight * (logit(r.p_llm) - logit(threshold)) >= 0
        if combined == r.local_retrieves:
            continue
        if combined == r.label:
            right += 1
            won += r.label  # a needed memory the local gate skipped
        else:
            wrong += 1
            lost += r.label  # a needed memory the cascade now skips
    return right, wrong, won, lost


def fit_threshold(sample: list[Asked]) -> float:
    """The P(true) threshold with the best accuracy on the sample (ties: the lower one)."""
    best, best_acc = 0.5, -1.0
    for t in [i / 100 for i in range(5, 96)]:
        acc = statistics.mean(((r.p_llm or 0.0) >= t) == r.label for r in sample)
        if acc > best_acc + 1e-9:
            best, best_acc = t, acc
    return best


def external_half(rows: list[Row], held_out: bool) -> list[Row]:
    """Every other row of the external set: the even ones fit the trust, the odd ones test it."""
    return rows[1::2] if held_out else rows[::2]


def read_set(name: str) -> list[Row]:
    """A dev set by name: ours under training/data, or `external-a` from the eval folder."""
    if name == "external-a":
        return external_half(read_rows(DEFAULT_EVAL_DIR / "gate_external.jsonl")[0], False)
    return read_rows(DATA_DIR / f"gate_{name}_test.jsonl")[0]


def fit_trust(
    band_rows: dict[str, list[Asked]], threshold: float
) -> tuple[float, float, dict[str, Any]]:
    """(band, weight, what was tried): the best net gain that loses on no set, or (0, 0)."""
    tried: dict[str, Any] = {}
    best = (0.0, 0.0, 0)
    for band in BANDS:
        for weight in WEIGHTS:
            per_set = [flips(rows, band, weight, threshold) for rows in band_rows.values()]
            right, wrong, won, lost = (sum(column) for column in zip(*per_set, strict=True))
            net = right - wrong
            tried[f"band {band} weight {weight:g}"] = {"right": right, "wrong": wrong}
            # Recall must not drop (every needed memory lost is won back elsewhere), and
            # no single set may lose: a gain carried by one kind of writing is not trusted.
            no_set_loses = all(r - w >= 0 for r, w, _, _ in per_set)
            if net >= MIN_NET_GAIN and won >= lost and no_set_loses and net > best[2]:
                best = (band, weight, net)
    return best[0], best[1], tried


def ask_all(url: str, rows: list[Row], local: Any, cache: dict[str, Any]) -> list[Asked]:
    """The local gate's view of every row, and the LLM's P(true) (from `cache` if there)."""
    from assistant.gates.native import NativeLlamaGate

    gate = NativeLlamaGate(url, timeout=60.0, style="yes-no")
    gate.warm()
    p_local = local.probabilities([r.message for r in rows])
    decided = local.retrieves([r.message for r in rows])
    out = []
    for i, (row, p) in enumerate(zip(rows, p_local, strict=True)):
        margin = logit(float(p)) - logit(local.threshold)
        if row.message not in cache:
            decision = gate.decide(row.message)
            cache[row.message] = {"p": decision.confidence, "ms": decision.elapsed_ms}
        seen = cache[row.message]
        out.append(Asked(row.retrieve, float(p), margin, bool(decided[i]), seen["p"], seen["ms"]))
        if (i + 1) % 25 == 0:
            print(f"  asked {i + 1}/{len(rows)}", file=sys.stderr)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench calibrate-llm-gate --help`)."""
    parser.add_argument("--url", help="a running llama.cpp server (default: start the built-in)")
    parser.add_argument("--model-key", help="file the result under this name")
    parser.add_argument("--sets", default=",".join(DEV_SETS))
    parser.add_argument(
        "--per-set", type=int, default=60, help="random rows per set, for the threshold"
    )
    parser.add_argument(
        "--cache", type=Path, help="JSON of answers already asked (read, then written)"
    )


def command(args: argparse.Namespace) -> int:
    """Fit and save the trust for the model behind --url (or the built-in one)."""
    from assistant.config import Settings
    from assistant.gates.local import shared_local_gate

    settings = Settings.from_env()
    local_model = None
    url = args.url
    if url is None:
        from assistant.eval.local_server import ModelNotReady, start_local

        try:
            local_model = start_local(settings, say=True)
        except ModelNotReady as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        settings = local_model.settings
        url = settings.native_url
    else:
        settings = settings.with_(native_url=url)
    key = args.model_key or trust_key(settings)
    local = shared_local_gate()
    rows: list[Row] = []
    set_of: dict[str, str] = {}
    sample_idx: set[int] = set()
    for name in args.sets.split(","):
        these = read_set(name)
        set_of.update((r.message, name) for r in these)
        # The same seeded picks per set on every run, so a cached answer is reused.
        picks = random.Random(SEED).sample(range(len(these)), min(args.per_set, len(these)))
        sample_idx |= {len(rows) + i for i in picks}
        rows += these
    p_local = local.probabilities([r.message for r in rows])
    wanted = [
        r
        for i, (r, p) in enumerate(zip(rows, p_local, strict=True))
        if i in sample_idx or abs(logit(float(p)) - logit(local.threshold)) < WIDEST_BAND
    ]
    print(f"asking the model about {len(wanted)} held-out messages", file=sys.stderr)
    cache = json.loads(args.cache.read_text()) if args.cache and args.cache.exists() else {}
    try:
        asked = ask_all(url, wanted, local, cache)
    finally:
        if local_model is not None:
            local_model.stop()
        if args.cache:
            args.cache.write_text(json.dumps(cache))
    by_message = dict(zip([r.message for r in wanted], asked, strict=True))
    sample = [by_message[rows[i].message] for i in sorted(sample_idx)]
    by_set: dict[str, list[Asked]] = {}
    for row, a in zip(wanted, asked, strict=True):
        if abs(a.margin) < WIDEST_BAND:
            by_set.setdefault(set_of[row.message], []).append(a)
    band_rows = [a for rows in by_set.values() for a in rows]
    threshold = fit_threshold(sample)
    band, weight, tried = fit_trust(by_set, threshold)
    labels = [a.label for a in sample]
    llm_scores = score(
        labels, [(a.p_llm or 0) >= threshold for a in sample], [a.ms for a in sample]
    )
    local_ms = []
    for i in sorted(sample_idx):
        local.encoder().clear_cache()  # the probabilities above embedded it: time the model
        started = time.perf_counter()
        local.decide(rows[i].message)
        local_ms.append((time.perf_counter() - started) * 1000.0)
    local_scores = score(labels, [a.local_retrieves for a in sample], local_ms)
    cascade_pred, cascade_ms = [], []
    for a, ms in zip(sample, local_ms, strict=True):
        asks = weight > 0 and abs(a.margin) < band  # with weight 0 it never asks the LLM
        vote = a.margin + weight * (logit(a.p_llm or 0.5) - logit(threshold))
        cascade_pred.append(vote >= 0 if asks else a.local_retrieves)
        cascade_ms.append(ms + a.ms if asks else ms)
    cascade_scores = score(labels, cascade_pred, cascade_ms)
    right, wrong, _won, _lost = flips(band_rows, band, weight, threshold)
    trust = LlmTrust(
        model=key,
        measured=True,
        style="yes-no",
        threshold=threshold,
        weight=weight,
        band=band,
        scores={
            "llm": llm_scores,
            "local": local_scores,
            "cascade": cascade_scores,
            "dev": {
                "sets": args.sets,
                "band_rows": len(band_rows),
                "flips_right": right,
                "flips_wrong": wrong,
                "tried": tried,
            },  # fmt: skip
        },
    )
    save_trust(trust)
    print(f"{key}: threshold {threshold}, band {band}, weight {weight:g}")
    print(f"  llm on {len(sample)} dev messages: {llm_scores}")
    print(f"  local on the same: {local_scores}")
    print(f"  cascade flips on the dev band ({len(band_rows)}): right {right}, wrong {wrong}")
    return 0
