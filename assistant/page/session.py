"""Session views over a list of `Exchange` records: stats and chart rows for the UI.

Pure Python (no Streamlit), so the numbers the sidebar shows are unit-tested.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.turn.chat import Exchange

# Estimated memory tokens a skipped search would have injected, used only until the session
# has a retrieved turn to measure: about two persona-sized memories (~80 chars each).
DEFAULT_TOKENS_PER_SEARCH = 40
STAGES = ("gate", "search", "reply", "capture")


@dataclass(frozen=True)
class SessionStats:
    """What the sidebar says about this conversation."""

    turns: int = 0
    searched: int = 0
    skipped: int = 0
    failed_open: int = 0
    errors: int = 0
    memory_tokens_injected: int = 0
    memory_tokens_not_injected: int = 0  # an estimate unless compare mode measured it
    median_overhead_ms: float | None = None
    median_gate_ms: float | None = None


def session_stats(exchanges: Sequence[Exchange]) -> SessionStats:
    """Counts and token savings over the gated turns (compare twins only inform estimates)."""
    if not exchanges:
        return SessionStats()
    gated = [e.gated for e in exchanges]
    retrieved = [t for t in gated if t.decision.retrieve]
    # Mean tokens a search actually injected this session; the fallback covers the
    # session's first turns, before anything was retrieved.
    measured = [t.usage.memory_tokens for t in retrieved if t.memories]
    per_search = round(statistics.mean(measured)) if measured else DEFAULT_TOKENS_PER_SEARCH
    not_injected = 0
    for e in exchanges:
        if e.gated.decision.retrieve:
            continue
        # Compare mode ran the search anyway: use what it really found.
        not_injected += e.always.usage.memory_tokens if e.always is not None else per_search
    return SessionStats(
        turns=len(gated),
        searched=len(retrieved),
        skipped=len(gated) - len(retrieved),
        failed_open=sum(1 for t in gated if t.decision.failed_open),
        errors=sum(1 for t in gated if t.error),
        memory_tokens_injected=sum(t.usage.memory_tokens for t in gated),
        memory_tokens_not_injected=not_injected,
        median_overhead_ms=statistics.median(t.timings.overhead_ms for t in gated),
        median_gate_ms=statistics.median(t.decision.elapsed_ms for t in gated),
    )


def stage_rows(exchanges: Sequence[Exchange]) -> list[dict[str, object]]:
    """Long-format rows {turn, stage, order, ms} of the gated turns, for a stacked bar chart."""
    rows: list[dict[str, object]] = []
    for number, exchange in enumerate(exchanges, start=1):
        t = exchange.gated.timings
        values = (t.gate_ms, t.search_ms, t.reply_ms, t.capture_ms)
        for order, (stage, ms) in enumerate(zip(STAGES, values, strict=True)):
            rows.append({"turn": number, "stage": stage, "order": order, "ms": round(ms, 1)})
    return rows


@dataclass(frozen=True)
class CompareMedians:
    """Compare mode's running medians: first-token ms per twin over the session so far."""

    exchanges: int = 0  # compare-mode exchanges counted
    gated_first_token_ms: float | None = None
    always_first_token_ms: float | None = None


def compare_medians(exchanges: Sequence[Exchange], upto: Exchange | None = None) -> CompareMedians:
    """Median first token of each twin over the compare exchanges, up to and including `upto`.

    `upto` may be an exchange not in `exchanges` yet (the one just answered): it is counted last.
    """
    if upto is not None:
        ids = [e.id for e in exchanges]
        before = exchanges[: ids.index(upto.id)] if upto.id in ids else exchanges
        exchanges = [*before, upto]
    twins = [(e.gated, e.always) for e in exchanges if e.always is not None]
    gated = [t.timings.first_token_ms for t, _ in twins if t.timings.first_token_ms is not None]
    always = [t.timings.first_token_ms for _, t in twins if t.timings.first_token_ms is not None]
    return CompareMedians(
        exchanges=len(twins),
        gated_first_token_ms=statistics.median(gated) if gated else None,
        always_first_token_ms=statistics.median(always) if always else None,
    )


@dataclass(frozen=True)
class Scoreboard:
    """The few numbers a room reads off the stage after each turn (issue 58).

    `measured_tokens` and `measured_first_token` are False where a figure is an estimate:
    the screen labels it so and never shows an estimate as measured.
    """

    turns: int = 0
    skipped: int = 0
    memory_tokens_kept_out: int = 0
    measured_tokens: bool = False  # every skipped turn had a compare twin that searched
    gated_first_token_ms: float | None = None
    always_first_token_ms: float | None = None
    measured_first_token: bool = False  # both medians from compare mode's twins
    first_token_over: int = 0  # exchanges the first-token medians are taken over
    gate_median_ms: float | None = None


def scoreboard(exchanges: Sequence[Exchange]) -> Scoreboard:
    """The stage's numbers: measured where compare mode ran, estimated (and said so) where not.

    Without compare mode, always-retrieve's first token is estimated as the median first
    token of this session's turns that did search: each carried memories, as every
    always-retrieve turn does.
    """
    if not exchanges:
        return Scoreboard()
    stats = session_stats(exchanges)
    skipped = [e for e in exchanges if not e.gated.decision.retrieve]
    medians = compare_medians(exchanges)
    if medians.exchanges:
        gated_ms, always_ms = medians.gated_first_token_ms, medians.always_first_token_ms
        over = medians.exchanges
    else:
        firsts = [
            (e.gated.decision.retrieve, e.gated.timings.first_token_ms)
            for e in exchanges
            if e.gated.timings.first_token_ms is not None
        ]
        gated = [ms for _, ms in firsts]
        searched = [ms for retrieve, ms in firsts if retrieve]
        gated_ms = statistics.median(gated) if gated else None
        always_ms = statistics.median(searched) if searched else None
        over = len(gated)
    return Scoreboard(
        turns=stats.turns,
        skipped=stats.skipped,
        memory_tokens_kept_out=stats.memory_tokens_not_injected,
        measured_tokens=all(e.always is not None for e in skipped),
        gated_first_token_ms=gated_ms,
        always_first_token_ms=always_ms,
        measured_first_token=bool(medians.exchanges),
        first_token_over=over,
        gate_median_ms=stats.median_gate_ms,
    )
