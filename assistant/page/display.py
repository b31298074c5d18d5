"""Text the UI shows, as pure functions: escaped markdown, times, one-line summaries.

No Streamlit here, so what the screen says is unit-tested without a browser.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.page.session import STAGES
from assistant.runtime.local_model import ModelState

if TYPE_CHECKING:
    from assistant.gates.base import GateDecision
    from assistant.page.session import CompareMedians, Scoreboard, SessionStats
    from assistant.runtime.local_model import ModelStatus
    from assistant.turn.chat import Exchange
    from assistant.turn.pipeline import Turn
    from memory.corrections import Correction
    from memory.records import Memory

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$=&])")
# Streamlit's markdown (remark-gfm) links bare addresses found in the parsed text, after
# escapes are undone: "http\\://…", "www\\.…" and "a@b\\.c" still became links. A word
# joiner (U+2060, invisible) inside the scheme, after "www" and around "@" breaks the match.
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|file|mailto|xmpp)(?=\\:)|\b(www)(?=\\\.)|@")
_JOINER = "\u2060"


def _unlink(match: re.Match[str]) -> str:
    word = match.group(1) or match.group(2)
    return f"{word}{_JOINER}" if word else f"{_JOINER}@{_JOINER}"


def as_text(text: str) -> str:
    """Markdown that shows `text` literally: no formatting, links, images, HTML or icons."""
    # Backslash-escaping every ASCII punctuation mark is CommonMark's own way to say
    # "this character is text"; ':' also stops Streamlit's :icon: and :color[...] syntax.
    escaped = _MD_SPECIAL.sub(r"\\\1", text.replace("\r\n", "\n").replace("\r", "\n"))
    escaped = _AUTOLINK.sub(_unlink, escaped)
    return escaped.replace("\n", "  \n")  # keep the user's line breaks


def model_markdown(text: str) -> str:
    """A model reply as markdown, with images turned into text so nothing loads from the web."""
    # Retrieved memories reach the model; an injected ![](http://...) must not phone home.
    return text.replace("![", "!\\[")


def offline_markdown(text: str) -> str:
    """The offline responder's reply: its "> " quote lines as one quote block, text escaped."""
    out: list[str] = []
    for line in text.split("\n"):
        if line.startswith("> "):
            if out and not out[-1].startswith(">"):
                out.append("")  # a blank line opens the quote block
            out.append("> " + as_text(line[2:]))
        elif line.strip():
            out.append(as_text(line))
    # Hard line breaks keep each memory on its own line inside the one quote block.
    return "  \n".join(out).replace("  \n  \n", "\n\n")


def redact(text: str, api_key: str | None) -> str:
    """Belt and braces: the API key never reaches the screen, whatever an error says."""
    return text.replace(api_key, "[api key]") if api_key else text


def fmt_ms(ms: float | None) -> str:
    """Milliseconds for people: one decimal when small."""
    if ms is None:
        return "–"
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:,.0f} ms"


def memory_line(memory: Memory) -> str:
    """One memory as a markdown list item, its text escaped."""
    score = "" if memory.similarity is None else f"`{memory.similarity:.2f}` "
    return f"- {score}{as_text(memory.text)}"


def compare_line(exchange: Exchange) -> str:
    """What the twins measured: first token and memory tokens sent, and which ran first.

    Each twin follows its own conversation, and on our own llama.cpp server answers in a
    slot of its own: neither reuses what the other just read, so the order does not make
    one look faster. It still alternates between exchanges, and is said here.
    """
    gated, always = exchange.gated, exchange.always
    if always is None:  # only a compare-mode exchange has a twin
        return ""
    first = "always-retrieve" if exchange.always_ran_first else "gated"
    return (
        f"first token: gated {fmt_ms(gated.timings.first_token_ms)}, always-retrieve "
        f"{fmt_ms(always.timings.first_token_ms)} · memory tokens sent: gated "
        f"~{gated.usage.memory_tokens:,}, always-retrieve ~{always.usage.memory_tokens:,} · "
        f"{first} ran first (each twin has its own conversation and model cache)"
    )


def medians_line(medians: CompareMedians) -> str:
    """The session's running medians of first token per twin, shown beside compare_line."""
    if not medians.exchanges:
        return ""
    n = medians.exchanges
    return (
        f"session median first token ({n} {'exchange' if n == 1 else 'exchanges'}): "
        f"gated {fmt_ms(medians.gated_first_token_ms)}, "
        f"always-retrieve {fmt_ms(medians.always_first_token_ms)}"
    )


def loading_label(status: ModelStatus) -> str:
    """ "Loading the local model… assembling 45%" and the like."""
    what = status.detail or status.state.value
    if status.state is ModelState.ASSEMBLING:
        return f"Setting up the local model (once): {what} {status.progress:.0%}"
    return f"Loading the local model… {what}"


def details_title(turn: Turn) -> str:
    """The title of a turn's details: whether memory was searched, and what was used."""
    if not turn.decision.retrieve:
        return "Details · memory not searched"
    n = len(turn.memories)
    title = f"Details · {n} {'memory' if n == 1 else 'memories'} used"
    return title + (f" · {len(turn.withheld)} withheld" if turn.withheld else "")


def stage_table(turn: Turn) -> str:
    """The time of each stage as a one-row markdown table, compact enough for every reply."""
    t = turn.timings
    stages = {
        "gate": fmt_ms(t.gate_ms),
        "search": fmt_ms(t.search_ms) if turn.decision.retrieve else "skipped",
        "first token": fmt_ms(t.first_token_ms),
        "reply": fmt_ms(t.reply_ms),
        "capture": fmt_ms(t.capture_ms) if turn.capture else "–",
        "total": fmt_ms(t.total_ms),
        "ours (outside model calls)": fmt_ms(t.overhead_ms),
    }
    return (
        "| " + " | ".join(stages) + " |\n"
        "|" + "---:|" * len(stages) + "\n"
        "| " + " | ".join(stages.values()) + " |"
    )


def tokens_line(turn: Turn) -> str:
    """Tokens each model call spent, the memories' estimate, and how the gate decided."""
    u = turn.usage
    return (
        f"tokens · gate {u.gate_input} in / {u.gate_output} out · "
        f"reply {u.chat_input} in / {u.chat_output} out · "
        f"memories ~{u.memory_tokens} · decided by {turn.decision.method.value}"
    )


def stats_markdown(stats: SessionStats) -> str:
    """The session's turns, skipped searches, tokens not injected and median overhead."""
    return (
        f"**{stats.turns}** {'turn' if stats.turns == 1 else 'turns'} · "
        f"**{stats.skipped}** {'search' if stats.skipped == 1 else 'searches'} skipped  \n"
        f"**~{stats.memory_tokens_not_injected:,}** memory tokens not injected  \n"
        f"median overhead outside model calls **{fmt_ms(stats.median_overhead_ms)}**"
    )


def scoreboard_tiles(board: Scoreboard) -> list[tuple[str, str, str]]:
    """The stage's big numbers as (label, value, caption); an estimate is captioned so."""
    if board.gated_first_token_ms is None or board.always_first_token_ms is None:
        first, how = "–", "needs a turn that searched, or compare mode"
    else:
        first = f"{fmt_ms(board.gated_first_token_ms)} vs {fmt_ms(board.always_first_token_ms)}"
        n = board.first_token_over
        how = (
            f"measured: compare mode, {n} {'exchange' if n == 1 else 'exchanges'}"
            if board.measured_first_token
            else "estimate: always-retrieve taken as this session's turns that searched"
        )
    tokens_how = "measured by compare mode" if board.measured_tokens else "estimate"
    return [
        (
            "searches skipped",
            f"{board.skipped} of {board.turns}",
            "turns the gate answered without searching memory",
        ),
        ("memory tokens kept out", f"~{board.memory_tokens_kept_out:,}", tokens_how),
        ("first token: gated vs always", first, how),
        ("gate's median decision", fmt_ms(board.gate_median_ms), "per message"),
    ]


def stage_chart(rows: list[dict[str, object]], colours: list[str]) -> dict[str, object]:
    """A stacked bar chart of ms per stage per turn, as an inline Vega-Lite spec."""
    # Inline Vega-Lite: no pandas or altair import (~3 s) in front of an audience, and a
    # legend that fits the sidebar.
    return {
        "data": {"values": rows},
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "turn", "type": "ordinal", "axis": {"labelAngle": 0}},
            "y": {"field": "ms", "type": "quantitative", "aggregate": "sum", "title": "ms"},
            "color": {
                "field": "stage",
                "type": "nominal",
                "scale": {"domain": list(STAGES), "range": colours},
                "legend": {"orient": "bottom", "columns": 2, "title": None},
            },
            "order": {"field": "order", "type": "quantitative"},
        },
    }


# ---- corrections ----------------------------------------------------------------------


def wrong_help(decision: GateDecision) -> str:
    """The "Wrong decision?" button's help: what a click records, and what follows."""
    from assistant.gates.corrections.actions import opposite_label

    return (
        f"Record that this message {opposite_label(decision)}; "
        "the gate then decides messages like it that way."
    )


def you_corrected(correction: Correction) -> str:
    """Under a badge the user already corrected: what they said of it."""
    from assistant.gates.corrections.actions import verdict

    return f"you corrected this: {verdict(correction)}"
