"""The answer evaluation's figures: one scored row per question and mode, summed per mode."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant.eval.stats import percentile


@dataclass
class Row:
    """One question answered in one mode, scored (a conversation: its last turn)."""

    question: str
    mode: str
    needs_memory: bool
    kind: str
    retrieved: bool
    failed_open: bool
    gate_reason: str
    memories: list[str]
    reply: str
    correct: bool
    leaked: bool | None  # questions that need memory: None (a memory is what they want)
    leak_terms: list[str] = field(default_factory=list)
    boilerplate: list[str] = field(default_factory=list)
    speaks_as_user: bool = False  # "My brother lives in Cork": the reply took the user's place
    first_token_ms: float | None = None
    memory_tokens: int = 0
    reply_error: str | None = None
    f1: float | None = None  # LoCoMo questions only
    note_read_back: list[str] = field(default_factory=list)  # the empty-search note's words
    query: str = ""  # what the gate searched for, when it retrieved
    # A conversation: every user turn (the scored one last), and what the earlier ones got.
    turns: list[str] = field(default_factory=list)
    earlier_replies: list[str] = field(default_factory=list)
    earlier_retrieved: list[bool] = field(default_factory=list)
    run: int = 1  # which of --repeat N runs


def _share(hits: int, n: int) -> float | None:
    return round(hits / n, 4) if n else None


def _p50(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(percentile(present, 0.5), 1) if present else None


# The shares a sampled run moves: with --repeat N, each gets its mean and spread over runs.
SPREAD_KEYS = (
    "memory_accuracy",
    "general_accuracy",
    "leak_rate",
    "boilerplate_rate",
    "note_leak_rate",
    "speaks_as_user_rate",
)


def spread(values: Sequence[float | None]) -> dict[str, Any] | None:
    """Mean, sample standard deviation, min and max of one figure over runs, and each run's."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    return {
        "mean": round(statistics.fmean(present), 4),
        "sd": round(statistics.stdev(present), 4) if len(present) > 1 else 0.0,
        "min": min(present),
        "max": max(present),
        "runs": list(values),
    }


def summarise(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """The figures per mode, in the order the modes first appear; pooled over repeated runs.

    Every run asks the same questions, so a pooled share is the mean of the runs' shares.
    With more than one run, `repeats` holds each share's mean and spread over the runs.
    """
    modes = dict.fromkeys(r.mode for r in rows)
    out = {mode: _figures([r for r in rows if r.mode == mode]) for mode in modes}
    runs = sorted({r.run for r in rows})
    if len(runs) > 1:
        for mode, figures in out.items():
            each = [_figures([r for r in rows if r.mode == mode and r.run == n]) for n in runs]
            figures["repeats"] = {
                "n": len(runs),
                **{key: spread([f[key] for f in each]) for key in SPREAD_KEYS},
            }
    return out


def _figures(mine: Sequence[Row]) -> dict[str, Any]:
    """One mode's figures over its rows."""
    mem = [r for r in mine if r.needs_memory]
    gen = [r for r in mine if not r.needs_memory]
    figures: dict[str, Any] = {
        "memory_accuracy": _share(sum(r.correct for r in mem), len(mem)),
        "general_accuracy": _share(sum(r.correct for r in gen), len(gen)),
        "leak_rate": _share(sum(bool(r.leaked) for r in gen), len(gen)),
        "boilerplate_rate": _share(sum(bool(r.boilerplate) for r in mine), len(mine)),
        "note_leak_rate": _share(sum(bool(r.note_read_back) for r in mine), len(mine)),
        "speaks_as_user_rate": _share(sum(r.speaks_as_user for r in mine), len(mine)),
        "failed_open": sum(r.failed_open for r in mine),
        "first_token_p50_general_ms": _p50([r.first_token_ms for r in gen]),
        "first_token_p50_memory_ms": _p50([r.first_token_ms for r in mem]),
        "memory_tokens": sum(r.memory_tokens for r in mine),
        "memory_tokens_general": sum(r.memory_tokens for r in gen),
        "retrieved_memory": _share(sum(r.retrieved for r in mem), len(mem)),
        "retrieved_general": _share(sum(r.retrieved for r in gen), len(gen)),
        "reply_errors": sum(r.reply_error is not None for r in mine),
        "n_memory": len(mem),
        "n_general": len(gen),
        "n_conversations": sum(len(r.turns) > 1 for r in mine),
    }
    kinds: dict[str, list[Row]] = {}
    for r in mine:
        kinds.setdefault(r.kind, []).append(r)
    figures["accuracy_by_kind"] = {
        kind: {"n": len(rs), "accuracy": _share(sum(r.correct for r in rs), len(rs))}
        for kind, rs in sorted(kinds.items())
    }
    scored = [r for r in mine if r.f1 is not None]
    if scored:
        figures["f1"] = round(sum(r.f1 or 0.0 for r in scored) / len(scored), 4)
        figures["f1_by_category"] = {
            kind: round(sum(r.f1 or 0.0 for r in rs) / len(rs), 4)
            for kind, rs in sorted(kinds.items())
            if all(r.f1 is not None for r in rs)
        }
    return figures


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} ms"


def _spread_line(repeats: dict[str, Any]) -> str:
    # "over 3 runs: mem acc 0.82 sd 0.04 (0.78-0.86), ..." for the shares that moved at all
    parts = [
        f"{key.removesuffix('_rate').removesuffix('_accuracy').replace('_', ' ')} "
        f"{s['mean']:.2f} sd {s['sd']:.2f} ({s['min']:.2f}-{s['max']:.2f})"
        for key in SPREAD_KEYS
        if (s := repeats.get(key)) is not None
    ]
    return f"{'':18} over {repeats['n']} runs: " + ", ".join(parts)


def table(result: dict[str, Any]) -> str:
    """The per-mode figures as a fixed-width text table, for the terminal."""
    lines = [
        f"model={result['model']} endpoint={result['endpoint']} "
        f"temperature={result.get('temperature', 0.0)}",
        f"{'mode':18} {'mem acc':>7} {'gen acc':>7} {'damaged':>7} {'boiler':>6} {'note':>5} "
        f"{'as user':>7} {'f-open':>6} {'1st tok gen':>11} {'1st tok mem':>11} {'mem tok':>7}",
    ]
    for mode, f in result["modes"].items():
        lines.append(
            f"{mode:18} {_pct(f['memory_accuracy']):>7} {_pct(f['general_accuracy']):>7} "
            f"{_pct(f['leak_rate']):>7} {_pct(f['boilerplate_rate']):>6} "
            f"{_pct(f['note_leak_rate']):>5} {_pct(f['speaks_as_user_rate']):>7} "
            f"{f['failed_open']:>6} {_ms(f['first_token_p50_general_ms']):>11} "
            f"{_ms(f['first_token_p50_memory_ms']):>11} {f['memory_tokens']:>7}"
            + (f"  F1 {f['f1']:.3f}" if "f1" in f else "")
        )
        if "repeats" in f:
            lines.append(_spread_line(f["repeats"]))
    return "\n".join(lines)
