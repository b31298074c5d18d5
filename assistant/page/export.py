"""A session taken home: Markdown and JSON of every exchange and the scoreboard, and the chart.

Pure Python (no Streamlit): the page offers these as downloads, and the tests read them.
Both carry a talk's beat numbers (`Exchange.beat`) when a talk was played. The chart is
an SVG drawn here, not a screenshot of the page: it opens in any slide tool and needs no
browser or plotting package.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from html import escape
from typing import TYPE_CHECKING, Any, Protocol

from assistant.page.display import fmt_ms
from assistant.page.session import STAGES, scoreboard, stage_rows

if TYPE_CHECKING:
    from assistant.turn.chat import Exchange
    from assistant.turn.pipeline import Turn


class Beat(Protocol):
    """What the export reads of a talk's beat (assistant/talk.py, a layer above this one)."""

    number: int
    expect: str | None
    note: str


STAGE_COLOURS = ("#4f46e5", "#0ea5e9", "#f59e0b", "#9ca3af")  # gate, search, reply, capture
TIMED = ("gate", "search", "first_token", "reply", "total")  # each turn's times, in order


def _turn(turn: Turn) -> dict[str, Any]:
    """One turn as plain data: the decision, what was sent, the reply and its timings."""
    d, t = turn.decision, turn.timings
    return {
        "decision": "retrieve" if d.retrieve else "skip",
        "reason": d.reason,
        "method": d.method.value,
        "gate": d.gate,
        "query": d.query if d.retrieve else "",
        "query_source": d.query_source,
        "memories": [m.text for m in turn.memories],
        "reply": turn.reply,
        "error": turn.error,
        "ms": {
            stage: None if (ms := getattr(t, f"{stage}_ms")) is None else round(ms, 1)
            for stage in TIMED
        },
        "memory_tokens": turn.usage.memory_tokens,
    }


def session_data(exchanges: Sequence[Exchange], beats: Sequence[Beat] = ()) -> dict[str, Any]:
    """The session as one JSON-ready object: exchanges in order, then the scoreboard."""
    by_number = {b.number: b for b in beats}
    rows = []
    for number, exchange in enumerate(exchanges, start=1):
        gated = _turn(exchange.gated)
        row: dict[str, Any] = {"exchange": number, "message": exchange.message}
        beat = by_number.get(exchange.beat) if exchange.beat is not None else None
        if beat is not None:
            row["beat"] = {
                "number": beat.number,
                "of": len(beats),
                "expect": beat.expect,
                "note": beat.note,
                "as_expected": beat.expect in (None, gated["decision"]),
            }
        row["gated"] = gated
        if exchange.always is not None:
            row["always_retrieve"] = _turn(exchange.always)
        rows.append(row)
    return {"exchanges": rows, "scoreboard": asdict(scoreboard(exchanges))}


def session_json(exchanges: Sequence[Exchange], beats: Sequence[Beat] = ()) -> str:
    """The session as indented JSON."""
    return json.dumps(session_data(exchanges, beats), indent=2, ensure_ascii=False) + "\n"


def _quoted(text: str) -> str:
    """Text as a Markdown quote block, every line of it."""
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines()) or ">"


def _turn_markdown(title: str, t: dict[str, Any]) -> list[str]:
    lines = [f"**{title}: {t['decision']}** ({t['method']}): {t['reason']}"]
    if t["query"]:
        source = f" ({t['query_source']})" if t["query_source"] else ""
        lines.append(f"- query: “{t['query']}”{source}")
    if t["memories"]:
        lines.append("- memories sent:")
        lines += [f"  - {text}" for text in t["memories"]]
    timed = " · ".join(f"{s.replace('_', ' ')} {fmt_ms(t['ms'][s])}" for s in TIMED)
    lines.append(f"- {timed} · ~{t['memory_tokens']} memory tokens")
    if t["error"]:
        lines.append(f"- error: {t['error']}")
    return [*lines, "", _quoted(t["reply"]), ""]


def scoreboard_lines(board: dict[str, Any]) -> list[str]:
    """The scoreboard as Markdown bullets, each estimate said to be one."""
    first = (
        f"median first token: gated {fmt_ms(board['gated_first_token_ms'])}, always-retrieve "
        f"{fmt_ms(board['always_first_token_ms'])}"
    )
    first += (
        f" (measured by compare mode over {board['first_token_over']} exchange"
        f"{'' if board['first_token_over'] == 1 else 's'})"
        if board["measured_first_token"]
        else " (estimate: always-retrieve taken as this session's turns that searched)"
    )
    tokens = "measured" if board["measured_tokens"] else "estimate"
    return [
        f"- turns: {board['turns']}; searches skipped: {board['skipped']}",
        f"- memory tokens kept out of the prompt: ~{board['memory_tokens_kept_out']:,} ({tokens})",
        f"- {first}",
        f"- the gate's median decision time: {fmt_ms(board['gate_median_ms'])}",
    ]


def session_markdown(exchanges: Sequence[Exchange], beats: Sequence[Beat] = ()) -> str:
    """The session as Markdown: each exchange (beat, message, decisions, replies), then the
    scoreboard."""
    data = session_data(exchanges, beats)
    lines = ["# Memory Gate session", ""]
    for row in data["exchanges"]:
        heading = f"## {row['exchange']}. {row['message']}"
        lines += [heading, ""]
        beat = row.get("beat")
        if beat is not None:
            expected = f", expected {beat['expect']}" if beat["expect"] else ""
            flag = "" if beat["as_expected"] else " — **not as the talk expected**"
            lines.append(f"Beat {beat['number']} / {beat['of']}{expected}{flag}")
            if beat["note"]:
                lines.append(f"Presenter's note: {beat['note']}")
            lines.append("")
        lines += _turn_markdown("Gated", row["gated"])
        if "always_retrieve" in row:
            lines += _turn_markdown("Always-retrieve twin", row["always_retrieve"])
    lines += ["## Scoreboard", "", *scoreboard_lines(data["scoreboard"]), ""]
    return "\n".join(lines)


def stage_chart_svg(exchanges: Sequence[Exchange], width: int = 960, height: int = 540) -> str:
    """The ms per stage per turn as a stacked bar chart, an SVG for a slide (16:9 by default)."""
    rows = stage_rows(exchanges)
    turns = sorted({int(r["turn"]) for r in rows})  # type: ignore[call-overload]
    totals = {n: sum(float(r["ms"]) for r in rows if r["turn"] == n) for n in turns}  # type: ignore[arg-type]
    top = max(totals.values(), default=0.0) or 1.0
    left, right, upper, lower = 90, 30, 40, 90
    plot_w, plot_h = width - left - right, height - upper - lower
    step = plot_w / max(len(turns), 1)
    bar = step * 0.6
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="16">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="26" font-size="20" font-weight="bold">ms per stage, each turn</text>',
    ]
    for i in range(5):  # the y axis: five gridlines, labelled
        value = top * i / 4
        y = upper + plot_h - plot_h * i / 4
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>'
        )
        parts.append(f'<text x="{left - 8}" y="{y + 5:.1f}" text-anchor="end">{value:,.0f}</text>')
    for i, n in enumerate(turns):
        x = left + step * i + (step - bar) / 2
        y = upper + plot_h
        for stage, colour in zip(STAGES, STAGE_COLOURS, strict=True):
            ms = sum(float(r["ms"]) for r in rows if r["turn"] == n and r["stage"] == stage)  # type: ignore[arg-type]
            h = plot_h * ms / top
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{colour}"><title>turn {n} {stage}: {ms:,.1f} ms</title></rect>'
            )
        parts.append(
            f'<text x="{x + bar / 2:.1f}" y="{upper + plot_h + 22}" text-anchor="middle">{n}</text>'
        )
    legend_y = height - 24
    for i, (stage, colour) in enumerate(zip(STAGES, STAGE_COLOURS, strict=True)):
        x = left + i * 150
        parts.append(f'<rect x="{x}" y="{legend_y - 13}" width="16" height="16" fill="{colour}"/>')
        parts.append(f'<text x="{x + 22}" y="{legend_y}">{escape(stage)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
