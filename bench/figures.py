"""How a benchmark states its figures: markdown tables, latency summaries, load, plots.

Every section that prints a table builds it here (`table_head`, `table_row`), so a table
reads the same in every section of docs/benchmarks.md. Latencies are summarised one way
(`latency`: the median and the nearest-rank p95 of `assistant.eval.stats`, the one
percentile the evaluations use too), timed one way (`timings_ms`), and every report that
quotes the machine's load reads it here. matplotlib (the bench extra) is loaded only by
`pyplot()`, when a plot is drawn.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assistant.eval.stats import percentile

_SEPARATORS = {"l": "---", "r": "---:"}


def table_row(*cells: object) -> str:
    """One row of a markdown table: `| a | b | c |`."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def table_head(*columns: str, align: str = "") -> list[str]:
    """A markdown table's header and separator rows.

    `align` has a letter a column, `l` (left) or `r` (right); by default the first column
    is left-aligned (a name) and the others right-aligned (figures).
    """
    align = align or "l" + "r" * (len(columns) - 1)
    if len(align) != len(columns) or set(align) - set(_SEPARATORS):
        raise ValueError(f"align {align!r} for {len(columns)} columns")
    return [table_row(*columns), "|" + "|".join(_SEPARATORS[a] for a in align) + "|"]


def latency(values: Sequence[float], digits: int = 1) -> dict[str, Any]:
    """p50 and p95 in ms, rounded, and how many values: the figures a latency table shows."""
    return {
        "p50_ms": round(statistics.median(values), digits) if values else 0.0,
        "p95_ms": round(percentile(values, 0.95), digits),
        "n": len(values),
    }


def median(values: Sequence[float], digits: int = 2) -> float | None:
    """The median, rounded; None when there are no values."""
    return round(statistics.median(values), digits) if values else None


def timings_ms(fn: Callable[[], Any], repeat: int) -> list[float]:
    """How long each of `repeat` calls of `fn` took, in ms."""
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000.0)
    return out


def load_average() -> str:
    """The 1/5/15-minute load averages, as the report should state them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def pyplot() -> Any:
    """matplotlib.pyplot, drawing to files only (the bench extra; never imported by the app)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
