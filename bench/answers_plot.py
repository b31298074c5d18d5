"""The answers section's plot: right and damaged replies per gate mode, and how soon.

One row a question set: the share of right and damaged replies per mode, beside the first
token's p50 (bench/answers_bench.py draws it into docs/benchmarks.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.figures import pyplot


def plot(sets: dict[str, Any], path: Path) -> None:
    """Per set: accuracy on each kind and damaged replies per mode, beside first-token p50."""
    plt = pyplot()
    shown = {k: v for k, v in sets.items() if "modes" in v}
    if not shown:
        return
    fig, axes = plt.subplots(len(shown), 2, figsize=(11, 3.2 * len(shown)), squeeze=False)
    for (name, data), (left, right) in zip(shown.items(), axes, strict=True):
        modes = list(data["modes"])
        xs = range(len(modes))
        bars = (
            ("memory_accuracy", "right: memory questions", "#2f7ed8"),
            ("general_accuracy", "right: general questions", "#8bbc21"),
            ("leak_rate", "damaged general replies", "#d9534f"),
        )
        width = 0.27
        for j, (key, label, colour) in enumerate(bars):
            values = [data["modes"][m][key] or 0.0 for m in modes]
            left.bar([x + (j - 1) * width for x in xs], values, width, label=label, color=colour)
        left.set_xticks(list(xs), modes, rotation=20, fontsize=8)
        left.set_ylim(0, 1.3)
        left.set_title(f"{name}: share of replies", fontsize=10)
        left.legend(fontsize=7, loc="upper center", ncol=3)
        # LoCoMo has memory questions only: then its memory questions' first token is shown.
        kind = "general" if data["modes"][modes[0]]["n_general"] else "memory"
        key = f"first_token_p50_{kind}_ms"
        firsts = [(data["modes"][m][key] or 0.0) / 1000 for m in modes]
        right.barh(list(xs), firsts, color="#777777")
        right.set_yticks(list(xs), modes, fontsize=8)
        right.invert_yaxis()
        right.set_xlabel(f"first token p50 on {kind} questions (s)", fontsize=8)
        right.set_title(f"{name}: how soon replies start", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
