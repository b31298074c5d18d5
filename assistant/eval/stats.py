"""Summary statistics shared by the evaluations and the benchmarks."""

from __future__ import annotations

import math
from collections.abc import Iterable


def percentile(values: Iterable[float], q: float) -> float:
    """The nearest-rank q-quantile (q from 0 to 1) of the values; 0.0 when there are none."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    # Nearest rank, not interpolation: a reported p95 is a latency someone actually saw.
    # Rounding first keeps 0.95 * 20 from becoming rank 20 through float error.
    rank = math.ceil(round(q * len(ordered), 9))
    return ordered[min(max(rank, 1), len(ordered)) - 1]
