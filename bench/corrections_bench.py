"""Corrections: do they fix rewordings, leave other messages alone, and cost nothing?

The sets in training/data/corrections/ were written before any threshold was tried:
24 corrected messages with 6 rewordings each, and 399 unrelated messages drawn (seeded)
from our fresh6/fresh7 test sets; each split in a dev and a held-out half.

- sweep: for each similarity threshold, on each half, the share of rewordings decided as
  their one correction says (only that correction stored), and the share of unrelated
  messages whose decision a correction changes (all of the half's corrections stored);
- the threshold: the best rewording share on dev with at most 1 % of dev's unrelated
  messages changed (ties: the higher threshold); then the held-out half is run through the
  real `CorrectedGate` on a real Chroma book at that threshold;
- a learning curve on unseen messages: half of each set is a pool, the other half is
  scored; 0, 5, 10 and 20 corrections are drawn (seeded) from the pool's messages the
  local gate got wrong;
- the local gate's decision time alone, and wrapped with 100 stored corrections.

    python -m bench corrections [--quick] [--markdown FILE] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from assistant.gates.labels import read_rows
from bench.figures import table_head, table_row
from bench.gate_report import DATA_DIR, DEFAULT_EVAL_DIR

SEED = 23
SETS_DIR = DATA_DIR / "corrections"
THRESHOLDS = [round(0.40 + 0.01 * i, 2) for i in range(56)]  # 0.40 .. 0.95
MAX_UNRELATED_CHANGED = 0.01
CURVE_STEPS = (0, 5, 10, 20)
CURVE_SETS = ("fresh9", "external")
LATENCY_CORRECTIONS = 100


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def decide_with(
    stored: np.ndarray, stored_labels: np.ndarray, vectors: np.ndarray, own: np.ndarray, t: float
) -> np.ndarray:
    """CorrectedGate's rule on vectors: the nearest correction at or above t, else the gate."""
    if len(stored) == 0:
        return own.copy()
    sims = vectors @ stored.T
    best = sims.argmax(axis=1)
    hit = sims[np.arange(len(vectors)), best] >= t
    return np.where(hit, stored_labels[best], own)


def _half(rows: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["split"] == split]


def sweep(
    para: list[dict[str, Any]],
    unrelated: list[dict[str, Any]],
    vec: Callable[[str], np.ndarray],
    own: Callable[[str], bool],
) -> dict[str, list[dict[str, float]]]:
    """Per half and threshold: rewordings decided right, unrelated messages changed."""
    out: dict[str, list[dict[str, float]]] = {}
    for split in ("dev", "heldout"):
        rows = _half(para, split)
        corrected = [r for r in rows if r["role"] == "corrected"]
        stored = np.stack([vec(r["message"]) for r in corrected])
        labels = np.array([r["retrieve"] for r in corrected])
        others = _half(unrelated, split)
        ov = np.stack([vec(r["message"]) for r in others])
        o_own = np.array([own(r["message"]) for r in others])
        o_label = np.array([r["retrieve"] for r in others])
        per_t = []
        for t in THRESHOLDS:
            right = total = 0
            for i, c in enumerate(corrected):
                rew = [r for r in rows if r["group"] == c["group"] and r["role"] == "rewording"]
                rv = np.stack([vec(r["message"]) for r in rew])
                r_own = np.array([own(r["message"]) for r in rew])
                got = decide_with(stored[i : i + 1], labels[i : i + 1], rv, r_own, t)
                right += int((got == labels[i]).sum())
                total += len(rew)
            changed = decide_with(stored, labels, ov, o_own, t)
            flips = changed != o_own
            per_t.append(
                {
                    "threshold": t,
                    "rewordings_right": round(right / total, 4),
                    "unrelated_changed": round(float(flips.mean()), 4),
                    "unrelated_changed_wrong": round(
                        float((flips & (changed != o_label)).mean()), 4
                    ),
                }
            )
        out[split] = per_t
    return out


def pick_threshold(dev: list[dict[str, float]]) -> float:
    """The best dev rewording share with at most 1 % of dev's unrelated messages changed."""
    allowed = [r for r in dev if r["unrelated_changed"] <= MAX_UNRELATED_CHANGED]
    best = max(r["rewordings_right"] for r in allowed)
    return max(r["threshold"] for r in allowed if r["rewordings_right"] == best)


def held_out_for_real(
    para: list[dict[str, Any]], unrelated: list[dict[str, Any]], local: Any, t: float
) -> dict[str, Any]:
    """The held-out half through the real CorrectedGate on a real Chroma book."""
    from assistant.gates.corrections.actions import open_corrections
    from assistant.gates.corrections.gate import CorrectedGate
    from memory.store import MemoryStore, release_folder

    rows = _half(para, "heldout")
    corrected = [r for r in rows if r["role"] == "corrected"]
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore.persistent(folder, "bench-corrections")
        try:
            book = open_corrections(store, local.encoder())
            gate = CorrectedGate(local, book, threshold=t)
            right = baseline = total = 0
            per_group = []
            for c in corrected:
                rew = [r for r in rows if r["group"] == c["group"] and r["role"] == "rewording"]
                baseline += sum(local.decide(r["message"]).retrieve == c["retrieve"] for r in rew)
                added = book.add(c["message"], c["retrieve"])
                got = sum(gate.decide(r["message"]).retrieve == c["retrieve"] for r in rew)
                book.delete(added.id)  # one correction at a time
                right += got
                total += len(rew)
                per_group.append(got / len(rew))
            book.add_many((c["message"], c["retrieve"], "", "", None) for c in corrected)
            others = _half(unrelated, "heldout")
            changed = wrong = 0
            for r in others:
                alone, wrapped = local.decide(r["message"]), gate.decide(r["message"])
                if alone.retrieve != wrapped.retrieve:
                    changed += 1
                    wrong += wrapped.retrieve != r["retrieve"]
        finally:
            store.close()
            release_folder(folder)
    return {
        "threshold": t,
        "corrections": len(corrected),
        "rewordings": total,
        "rewordings_right": round(right / total, 4),
        "rewordings_right_without": round(baseline / total, 4),
        "groups_at_least_80": sum(g >= 0.8 for g in per_group),
        "unrelated": len(others),
        "unrelated_changed": round(changed / len(others), 4),
        "unrelated_changed_wrong": round(wrong / len(others), 4),
    }


def learning_curve(
    rows: list[Any],
    vec: Callable[[str], np.ndarray],
    own: Callable[[str], bool],
    t: float,
    seeds: int,
) -> dict[str, Any]:
    """Accuracy on the scored half after n corrections from the pool half's gate mistakes."""
    vectors = np.stack([vec(r.message) for r in rows])
    gate = np.array([own(r.message) for r in rows])
    labels = np.array([r.retrieve for r in rows])
    points: dict[int, list[float]] = {n: [] for n in CURVE_STEPS}
    for seed in range(seeds):
        order = list(range(len(rows)))
        random.Random(SEED + seed).shuffle(order)
        pool, scored = order[: len(order) // 2], np.array(order[len(order) // 2 :])
        wrong = [i for i in pool if gate[i] != labels[i]]
        drawn = random.Random(SEED + seed).sample(wrong, min(max(CURVE_STEPS), len(wrong)))
        for n in CURVE_STEPS:
            picked = np.array(drawn[:n], dtype=int)
            got = decide_with(vectors[picked], labels[picked], vectors[scored], gate[scored], t)
            points[n].append(float((got == labels[scored]).mean()))
    return {
        "n": len(rows),
        "scored": len(rows) - len(rows) // 2,
        "seeds": seeds,
        "accuracy": {str(n): round(statistics.mean(v), 4) for n, v in points.items()},
        "min": {str(n): round(min(v), 4) for n, v in points.items()},
        "max": {str(n): round(max(v), 4) for n, v in points.items()},
    }


def latency(local: Any, messages: list[str], corrections: list[tuple[str, bool]]) -> dict[str, Any]:
    """The local gate's decision time alone and with stored corrections, paired per message."""
    from assistant.gates.corrections.actions import open_corrections
    from assistant.gates.corrections.gate import CorrectedGate
    from memory.store import MemoryStore, release_folder

    encoder = local.encoder()
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore.persistent(folder, "bench-corrections-latency")
        try:
            book = open_corrections(store, encoder)
            book.add_many((m, r, "", "", None) for m, r in corrections)
            gate = CorrectedGate(local, book)
            alone, wrapped = [], []
            for i, message in enumerate(messages):
                # Both arms embed for real (the cache would hide the model's time), and the
                # order alternates so neither always runs second on a warm CPU cache.
                arms = [(local, alone), (gate, wrapped)]
                for g, out in arms if i % 2 else arms[::-1]:
                    encoder.clear_cache()
                    started = time.perf_counter()
                    g.decide(message)
                    out.append((time.perf_counter() - started) * 1000.0)
            stored = book.count()
        finally:
            store.close()
            release_folder(folder)
    diffs = [w - a for a, w in zip(alone, wrapped, strict=True)]
    return {
        "messages": len(messages),
        "corrections": stored,
        "alone_p50_ms": round(statistics.median(alone), 3),
        "with_p50_ms": round(statistics.median(wrapped), 3),
        "added_p50_ms": round(statistics.median(wrapped) - statistics.median(alone), 3),
        "paired_diff_p50_ms": round(statistics.median(diffs), 3),
    }


def run(quick: bool = False, progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure the threshold sweep, the held-out figures, the curve and the cost."""
    from assistant.gates.corrections.gate import CORRECTION_SIMILARITY, GateReader
    from assistant.gates.local import LocalGate

    local = LocalGate()
    local.warm()
    reader = GateReader(local.encoder())
    para = _jsonl(SETS_DIR / "paraphrases.jsonl")
    unrelated = _jsonl(SETS_DIR / "unrelated.jsonl")
    curve_rows = {"fresh9": read_rows(DATA_DIR / "gate_fresh9_test.jsonl")[0]}
    external = DEFAULT_EVAL_DIR / "gate_external.jsonl"
    if external.exists() and not quick:
        curve_rows["external"] = read_rows(external)[0]
    if quick:  # a short run: a quarter of the unrelated messages, fewer curve seeds
        unrelated = unrelated[: len(unrelated) // 4]
    texts = sorted(
        {r["message"] for r in para + unrelated}
        | {r.message for rows in curve_rows.values() for r in rows}
    )
    progress(f"embedding and deciding {len(texts)} messages with the local gate")
    vectors = dict(zip(texts, reader(texts), strict=True))
    own = dict(zip(texts, (bool(x) for x in local.retrieves(texts)), strict=True))
    progress("sweeping thresholds")
    swept = sweep(para, unrelated, vectors.__getitem__, own.__getitem__)
    chosen = pick_threshold(swept["dev"])
    progress(f"threshold {chosen} on dev; the held-out half through the real gate")
    held = held_out_for_real(para, unrelated, local, chosen)
    progress("learning curves")
    curves = {
        name: learning_curve(rows, vectors.__getitem__, own.__getitem__, chosen, 3 if quick else 20)
        for name, rows in curve_rows.items()
    }
    progress("latency: local alone vs with 100 corrections")
    pool = read_rows(DATA_DIR / "gate_fresh8_test.jsonl")[0]
    rng = random.Random(SEED)
    stored = [(r.message, r.retrieve) for r in pool]
    rng.shuffle(stored)
    timed = [r.message for r in read_rows(DATA_DIR / "gate_fresh5_test.jsonl")[0]]
    rng.shuffle(timed)
    timing = latency(local, timed[: 40 if quick else 300], stored[:LATENCY_CORRECTIONS])
    return {
        "quick": quick,
        "threshold_in_code": CORRECTION_SIMILARITY,
        "threshold_chosen_on_dev": chosen,
        "sweep": swept,
        "heldout": held,
        "curves": curves,
        "latency": timing,
    }


def markdown(results: dict[str, Any], plots_dir: Path | None = None) -> str:
    """The section for docs/benchmarks.md."""
    held, timing = results["heldout"], results["latency"]
    t = results["threshold_chosen_on_dev"]
    lines = [
        "Sets written before any threshold was tried (training/data/corrections/). A "
        "correction decides a message when the cosine of their MiniLM readings is at least "
        f"the threshold. Chosen on dev: **{t:.2f}** (in code: "
        f"{results['threshold_in_code']:.2f}); best dev rewording share with at most "
        f"{MAX_UNRELATED_CHANGED:.0%} of dev's unrelated messages changed.",
        "",
        f"Held-out, through the real `CorrectedGate` and a Chroma book: one correction "
        f"decides **{held['rewordings_right']:.1%}** of its {held['rewordings']} rewordings "
        f"right ({held['rewordings_right_without']:.1%} without it; "
        f"{held['groups_at_least_80']}/{held['corrections']} corrections fix at least 80 %); "
        f"with all {held['corrections']} stored, **{held['unrelated_changed']:.1%}** of "
        f"{held['unrelated']} unrelated messages change decision "
        f"({held['unrelated_changed_wrong']:.1%} to a wrong one).",
        "",
        *table_head(
            "threshold",
            "dev rewordings right",
            "dev unrelated changed",
            "held-out rewordings right",
            "held-out unrelated changed",
            align="rrrrr",
        ),
    ]
    for d, h in zip(results["sweep"]["dev"], results["sweep"]["heldout"], strict=True):
        if round(d["threshold"] * 100) % 5 == 0 or d["threshold"] == t:
            mark = " **←**" if d["threshold"] == t else ""
            figures = (
                f"{x[k]:.3f}" for x in (d, h) for k in ("rewordings_right", "unrelated_changed")
            )
            lines.append(table_row(f"{d['threshold']:.2f}{mark}", *figures))
    lines += [
        "",
        "Learning curve on unseen messages (local gate; half of each set is the pool the "
        "corrections are drawn from, among the gate's mistakes; the other half is scored; "
        "mean over seeds, min–max in brackets):",
        "",
        *table_head("set", "scored", *(f"{n} corrections" for n in CURVE_STEPS)),
    ]
    for name, c in results["curves"].items():
        cells = [
            f"{c['accuracy'][str(n)]:.3f} ({c['min'][str(n)]:.3f}–{c['max'][str(n)]:.3f})"
            for n in CURVE_STEPS
        ]
        lines.append(table_row(f"{name} ({c['seeds']} seeds)", c["scored"], *cells))
    lines += [
        "",
        f"Decision time of the local gate, {timing['messages']} messages, each embedded for "
        f"real in both arms: alone p50 **{timing['alone_p50_ms']:.2f} ms**, with "
        f"{timing['corrections']} stored corrections **{timing['with_p50_ms']:.2f} ms** "
        f"(+{timing['added_p50_ms']:.2f} ms; paired difference p50 "
        f"{timing['paired_diff_p50_ms']:+.2f} ms). Target: at most +2 ms.",
    ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench corrections --help`)."""
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path, help="also write the results here")


def command(args: argparse.Namespace) -> int:
    """Run this section alone; print JSON, optionally write the markdown."""
    results = run(args.quick, lambda line: print(line, file=sys.stderr))
    text = json.dumps(results, indent=2, default=str)
    if args.json:
        args.json.write_text(text)
    else:
        print(text)
    if args.markdown:
        args.markdown.write_text(markdown(results) + "\n")
    return 0
