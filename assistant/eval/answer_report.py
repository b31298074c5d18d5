"""The answer evaluation's figures: one scored row per question and mode, summed per mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant.eval.stats import percentile


@dataclass
class Row:
    """One question answered in one mode, scored."""

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


def _share(hits: int, n: int) -> float | None:
    return round(hits / n, 4) if n else None


def _p50(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(percentile(present, 0.5), 1) if present else None


def summarise(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """The figures per mode, in the order the modes first appear."""
    out: dict[str, dict[str, Any]] = {}
    for mode in dict.fromkeys(r.mode for r in rows):
        mine = [r for r in rows if r.mode == mode]
        mem = [r for r in mine if r.needs_memory]
        gen = [r for r in mine if not r.needs_memory]
        figures: dict[str, Any] = {
            "memory_accuracy": _share(sum(r.correct for r in mem), len(mem)),
            "general_accuracy": _share(sum(r.correct for r in gen), len(gen)),
            "leak_rate": _share(sum(bool(r.leaked) for r in gen), len(gen)),
            "boilerplate_rate": _share(sum(bool(r.boilerplate) for r in mine), len(mine)),
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
        out[mode] = figures
    return out


def table(result: dict[str, Any]) -> str:
    """The per-mode figures as a fixed-width text table, for the terminal."""
    lines = [
        f"model={result['model']} endpoint={result['endpoint']}",
        f"{'mode':18} {'mem acc':>7} {'gen acc':>7} {'damaged':>7} {'boiler':>6} {'as user':>7} "
        f"{'f-open':>6} {'1st tok gen':>11} {'1st tok mem':>11} {'mem tok':>7}",
    ]
    for mode, f in result["modes"].items():

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f}"

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:,.0f} ms"

        lines.append(
            f"{mode:18} {pct(f['memory_accuracy']):>7} {pct(f['general_accuracy']):>7} "
            f"{pct(f['leak_rate']):>7} {pct(f['boilerplate_rate']):>6} "
            f"{pct(f['speaks_as_user_rate']):>7} {f['failed_open']:>6} "
            f"{ms(f['first_token_p50_general_ms']):>11} {ms(f['first_token_p50_memory_ms']):>11} "
            f"{f['memory_tokens']:>7}" + (f"  F1 {f['f1']:.3f}" if "f1" in f else "")
        )
    return "\n".join(lines)
