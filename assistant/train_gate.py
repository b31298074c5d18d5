"""Retrain the local gate from the project's own labelled messages, reproducibly.

    python -m assistant.train_gate [--data assistant/data/gate_train.jsonl]
                                   [--out assistant/data/local_gate.npz]

Logistic regression with an L2 penalty, fitted by Newton's method (deterministic: no
random initialisation, no sampling) on the train split. The penalty, the decision
threshold (held-out recall >= 0.98) and the cascade's unsure band are chosen on the
held-out split, which is never fitted on. The fresh sets
(`assistant/data/gate_fresh*_test.jsonl`) are read by neither: they are the unseen checks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.local_gate import FEATURE_NAMES, WEIGHTS_PATH, GateWeights, featurize
from memory.jsonl import read_jsonl

if TYPE_CHECKING:
    from memory.embeddings import MiniLM

DATA_PATH = Path(__file__).parent / "data" / "gate_train.jsonl"
L2_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
# The few hand cues may be penalised less than the 384 embedding dimensions: each cue is
# one strong, human-readable signal, and shrinking it as hard as a single embedding
# coordinate wastes it. Cross-validation picks the ratio.
CUE_RATIOS = (1.0, 0.1)
# The issue asks for >= 0.97 on the held-out split. Unseen messages lose 1 to 2.5 points of
# recall against it (docs/gate-report.md), so we aim a point higher: a miss loses a memory,
# a false alarm costs one ~10 ms search.
TARGET_RECALL = 0.98
BAND_LOGITS = 2.0  # how far below the threshold (in log-odds) the cascade still asks


@dataclass(frozen=True)
class Example:
    """One labelled message of the training set."""

    message: str
    retrieve: bool
    kind: str
    split: str


def load_examples(path: Path = DATA_PATH) -> list[Example]:
    """Read the JSONL training set; raises ValueError naming the bad line."""
    examples = []
    for number, row in read_jsonl(path):
        try:
            examples.append(
                Example(str(row["message"]), bool(row["retrieve"]), row["kind"], row["split"])
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}, line {number}: bad training line ({exc})") from exc
    return examples


def penalties(d: int, l2: float, cue_ratio: float) -> np.ndarray:
    """Per-coefficient L2 penalty: embedding dims get l2, hand cues l2 * cue_ratio."""
    penalty = np.full(d, l2)
    penalty[d - len(FEATURE_NAMES) :] = l2 * cue_ratio
    return penalty


def fit_logistic(
    x: np.ndarray, y: np.ndarray, penalty: np.ndarray, iterations: int = 50
) -> np.ndarray:
    """Newton's method for L2-penalised logistic regression; returns [coef..., intercept]."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    penalty = np.append(penalty, 0.0)  # the intercept is not shrunk
    w = np.zeros(d + 1)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -30.0, 30.0)))
        gradient = design.T @ (p - y) + penalty * w
        hessian = (design * (p * (1.0 - p))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hessian + 1e-9 * np.eye(d + 1), gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w


def _standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-8] = 1.0  # a constant column stays at zero instead of dividing by 0
    return mean, scale


def _log_loss(y: np.ndarray, p: np.ndarray) -> float:
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def choose_l2(
    x: np.ndarray,
    y: np.ndarray,
    held_x: np.ndarray,
    held_y: np.ndarray,
    grid: tuple[float, ...] = L2_GRID,
    ratios: tuple[float, ...] = CUE_RATIOS,
) -> tuple[float, float]:
    """(l2, cue_ratio) with the lowest log loss on the held-out split.

    Not k-fold on the train split: a fifth of the data comes from sentence templates,
    and folds by row would put the same template on both sides, rewarding a model that
    memorises templates. The held-out split holds whole templates out.
    """
    mean, scale = _standardise(x)
    best, best_loss = (grid[0], ratios[0]), float("inf")
    for l2, ratio in [(a, b) for a in grid for b in ratios]:
        w = fit_logistic((x - mean) / scale, y, penalties(x.shape[1], l2, ratio))
        z = ((held_x - mean) / scale) @ w[:-1] + w[-1]
        loss = _log_loss(held_y, 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))))
        if loss < best_loss - 1e-12:
            best, best_loss = (l2, ratio), loss
    return best


def _binomial_tail(n: int, k: int, q: float) -> float:
    """P(X >= k) for X ~ Binomial(n, q)."""
    return float(sum(math.comb(n, i) * q**i * (1.0 - q) ** (n - i) for i in range(k, n + 1)))


def recall_lower_bound(hits: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound on a recall of hits / n."""
    if hits <= 0:
        return 0.0
    lo, hi = 0.0, hits / n
    for _ in range(60):  # bisection: the tail grows with q
        mid = (lo + hi) / 2
        if _binomial_tail(n, hits, mid) < 1.0 - confidence:
            lo = mid
        else:
            hi = mid
    return lo


def recall_threshold(p: np.ndarray, y: np.ndarray, target: float = TARGET_RECALL) -> float:
    """The highest threshold whose held-out recall is at least `target` (point estimate).

    The held-out split (~850 positives, a third of them from sentence templates never
    trained on) is large enough for a point estimate; the 95% lower bound the first
    version used cost ~4 points of accuracy for recall the unseen sets did not show.
    Capped at 0.5, so the gate never needs more than even odds to retrieve.
    """
    positives = np.sort(p[y == 1])
    n = positives.size
    if n == 0:
        return 0.5
    misses = int(math.floor((1.0 - target) * n + 1e-9))
    misses = min(misses, n - 1)
    # Rounded down to 4 decimals: a held-out positive sitting exactly on the threshold
    # must not flip on float noise between batched and single encodings.
    return float(min(0.5, math.floor(positives[misses] * 1e4) / 1e4))


def cascade_band(p: np.ndarray, y: np.ndarray, threshold: float) -> tuple[float, float]:
    """The unsure band [low, high) that the cascade sends to the LLM.

    high: at or above it sit <= 1% of held-out negatives, so a local "retrieve" there is
    almost never a false alarm. low: BAND_LOGITS below the threshold in log-odds, because
    misses cost more than false alarms and the held-out split has too few misses to place
    the lower edge on.
    """
    negatives = np.sort(p[y == 0])
    high = negatives[min(int(np.ceil(0.99 * negatives.size)), negatives.size - 1)]
    logit = math.log(threshold / (1.0 - threshold))
    low = 1.0 / (1.0 + math.exp(-(logit - BAND_LOGITS)))
    return float(low), float(max(high, threshold))


def dataset_digest(examples: list[Example]) -> str:
    """A sha256 over the examples, stored with the weights to tie them to their data."""
    digest = hashlib.sha256()
    for ex in examples:
        digest.update(f"{ex.message}\t{ex.retrieve}\t{ex.split}\n".encode())
    return digest.hexdigest()


def train(
    examples: list[Example],
    model: MiniLM,
    grid: tuple[float, ...] = L2_GRID,
    ratios: tuple[float, ...] = CUE_RATIOS,
) -> GateWeights:
    """Fit on the train split; pick threshold and cascade band on the held-out split."""
    train_rows = [e for e in examples if e.split == "train"]
    held_rows = [e for e in examples if e.split == "heldout"]
    if not train_rows or not held_rows:
        raise ValueError("the data needs both a 'train' and a 'heldout' split")
    x = featurize(model, [e.message for e in train_rows])
    y = np.array([e.retrieve for e in train_rows], dtype=np.float64)
    held_x = featurize(model, [e.message for e in held_rows])
    held_y = np.array([e.retrieve for e in held_rows], dtype=np.float64)
    if len(grid) * len(ratios) > 1:
        l2, ratio = choose_l2(x, y, held_x, held_y, grid, ratios)
    else:
        l2, ratio = grid[0], ratios[0]
    mean, scale = _standardise(x)
    w = fit_logistic((x - mean) / scale, y, penalties(x.shape[1], l2, ratio))
    weights = GateWeights(
        coef=w[:-1],
        intercept=float(w[-1]),
        mean=mean,
        scale=scale,
        threshold=0.5,
        cascade_low=0.5,
        cascade_high=0.5,
        l2=l2,
        cue_ratio=ratio,
        dataset_sha256=dataset_digest(examples),
    )
    held_p = weights.probability(held_x)
    threshold = recall_threshold(held_p, held_y)
    low, high = cascade_band(held_p, held_y, threshold)
    return GateWeights(
        coef=weights.coef,
        intercept=weights.intercept,
        mean=mean,
        scale=scale,
        threshold=threshold,
        cascade_low=low,
        cascade_high=high,
        l2=l2,
        cue_ratio=ratio,
        dataset_sha256=weights.dataset_sha256,
    )


def main(argv: list[str] | None = None) -> int:
    """Train and write the weights; print what was chosen and the held-out figures."""
    parser = argparse.ArgumentParser(prog="python -m assistant.train_gate", description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA_PATH, help="labelled JSONL")
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH, help="weights file (.npz)")
    args = parser.parse_args(argv)

    from memory.embeddings import shared_model

    examples = load_examples(args.data)
    model = shared_model()
    weights = train(examples, model)
    weights.save(args.out)

    held = [e for e in examples if e.split == "heldout"]
    p = weights.probability(featurize(model, [e.message for e in held]))
    y = np.array([e.retrieve for e in held])
    pred = p >= weights.threshold
    tp = int(np.sum(pred & y))
    summary = {
        "train": sum(e.split == "train" for e in examples),
        "heldout": len(held),
        "l2": weights.l2,
        "cue_ratio": weights.cue_ratio,
        "threshold": round(weights.threshold, 4),
        "cascade_band": [round(weights.cascade_low, 4), round(weights.cascade_high, 4)],
        "heldout_accuracy": round(float(np.mean(pred == y)), 4),
        "heldout_precision": round(tp / max(int(pred.sum()), 1), 4),
        "heldout_recall": round(tp / max(int(y.sum()), 1), 4),
        "out": str(args.out),
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
