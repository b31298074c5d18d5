"""One exchange on the chat page: drawn while it runs, and again from its record.

`turn_opener` and `loading_box` make the callbacks the front is handed for a turn (the
gate's badge as soon as it decides, the reply as it streams, a loading model's progress);
`render_exchange` draws a finished `Exchange`, with its "Wrong decision?" button. The page
(app.py) runs the turn and keeps the session's records (`exchanges`, `inbox`) here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from assistant.gates.corrections.actions import BUTTON_LABEL
from assistant.page.display import (
    as_text,
    compare_line,
    details_title,
    fmt_ms,
    loading_label,
    medians_line,
    memory_line,
    model_markdown,
    offline_markdown,
    redact,
    stage_table,
    tokens_line,
    wrong_help,
    you_corrected,
)
from assistant.page.inbox import Inbox
from assistant.page.session import compare_medians
from assistant.reply.respond import ReplySource
from assistant.turn.chat import Exchange, OpenTurn, ReplyHooks
from assistant.turn.pipeline import Variant
from memory.records import MemoryStoreError

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

    from assistant.gates.base import GateDecision
    from assistant.runtime.local_model import ModelStatus
    from assistant.talk import TalkPlay
    from assistant.turn.front import Assistant
    from assistant.turn.pipeline import Turn

BADGES = {  # one colour per decision, readable from the back of the room
    "retrieved": ":blue-badge[:material/manage_search: RETRIEVED]",
    "skipped": ":green-badge[:material/bolt: SKIPPED]",
    "failed open": ":orange-badge[:material/warning: FAILED OPEN]",
}
SHOWN_MESSAGE_CHARS = 3_000  # longer messages are folded on screen, not in the pipeline
STREAM_EVERY_S = 0.05  # redraw the streaming reply at most 20 times a second


# ---- this session's records ---------------------------------------------------------


def exchanges() -> list[Exchange]:
    """This browser session's conversation: the Exchange records, oldest first."""
    return st.session_state.setdefault("exchanges", [])


def inbox() -> Inbox:
    """Messages sent but not yet answered, oldest first (see process_inbox).

    A `Rerun` (a corrected skip, answered again) waits in the same queue and takes the
    same path as a typed message.
    """
    return st.session_state.setdefault("inbox", Inbox())


def talk() -> TalkPlay | None:
    """The talk loaded in this session (its beats, how far the presenter is), if any."""
    return st.session_state.get("talk")


# ---- a finished exchange ---------------------------------------------------------------


def render_gate(decision: GateDecision, surprise: str = "") -> None:
    """The hero: badge, the gate's reason in its own words, the query, the gate's time; and
    a flag when a talk's beat expected the other decision."""
    parts = [BADGES[decision.label], f"**{as_text(decision.badge_reason or 'no reason given')}**"]
    if surprise:
        parts.insert(1, f":red-badge[:material/flag: {as_text(surprise)}]")
    if decision.retrieve and decision.query:
        source = f" · {decision.query_source}" if decision.query_source else ""
        parts.append(f"query “{as_text(decision.query)}”{source}")
    parts.append(f"{fmt_ms(decision.elapsed_ms)} · gate: {as_text(decision.gate)}")
    st.markdown(" &nbsp;·&nbsp; ".join(parts))


def render_details(turn: Turn) -> None:
    """The expander under the badge: memories used and the time of each stage."""
    with st.expander(details_title(turn)):
        if turn.decision.badge_reason != turn.decision.reason:
            st.markdown(f"**The gate's whole reason:** {as_text(turn.decision.reason)}")
        if turn.memories:
            st.markdown("**Memories given to the reply** (similarity · text)")
            st.markdown("\n".join(memory_line(m) for m in turn.memories))
        elif turn.decision.retrieve and not turn.withheld:
            st.caption("Searched: nothing scored above the relevance cut-off.")
        if turn.withheld:
            st.markdown("**Withheld from the reply** (memory is data, never instructions)")
            lines = [f"{memory_line(m)} · *{as_text(m.flag or '')}*" for m in turn.withheld]
            st.markdown("\n".join(lines))
        if turn.capture is not None and turn.capture.dropped:
            st.markdown("**Suggested by the capture model, not saved** (not in your words)")
            st.markdown("\n".join(f"- {as_text(fact)}" for fact in turn.capture.dropped))
        st.markdown(stage_table(turn))
        st.caption(tokens_line(turn))


def render_answer(
    turn: Turn, assistant: Assistant, *, show_capture: bool = True, surprise: str = ""
) -> None:
    """The assistant side of one turn: reply, error, badge line, notices, capture, details."""
    if turn.reply:
        if turn.reply_source is ReplySource.OFFLINE:
            st.markdown(offline_markdown(turn.reply))
            why = assistant.offline_reason or "no model configured"
            st.caption(f":material/cloud_off: offline responder · {as_text(why)}")
        else:
            st.markdown(model_markdown(turn.reply))
    if turn.error:
        key = assistant.settings.api_key
        st.error(
            f"**Something went wrong:** {as_text(redact(turn.error, key))}  \n"
            "The conversation goes on: send the message again or ask something else.",
            icon=":material/error:",
        )
    render_gate(turn.decision, surprise)
    render_correction(turn, assistant)
    if turn.notice:
        st.warning(as_text(turn.notice), icon=":material/content_cut:")
    if show_capture:
        render_capture(turn, assistant)
    render_details(turn)


def render_capture(turn: Turn, assistant: Assistant) -> None:
    """What capture saved ("saved: …"), or the problem it hit."""
    if turn.capture is None or not turn.capture.summary:
        return
    icon = ":material/warning:" if turn.capture.error else ":material/bookmark_added:"
    st.caption(f"{icon} {as_text(redact(turn.capture.summary, assistant.settings.api_key))}")


def render_correction(turn: Turn, assistant: Assistant) -> None:
    """Under a judged badge: the "Wrong decision?" button, or the correction already made."""
    if not assistant.can_correct(turn):
        return  # no corrections kept, or failed open, a rule, an empty message: not judged
    standing = assistant.standing_correction(turn)
    if standing is not None:
        st.caption(f":material/school: {as_text(you_corrected(standing))}")
        return
    st.button(
        BUTTON_LABEL,
        key=f"wrong-{turn.id}",  # turn ids are unique in the process: one button per turn
        icon=":material/thumb_down:",
        type="tertiary",
        help=wrong_help(turn.decision),
        on_click=correct_turn,
        args=(assistant, turn),
    )


def correct_turn(assistant: Assistant, turn: Turn) -> None:
    """Button callback: record the correction; a corrected skip joins the inbox as a re-run."""
    st.session_state.pop("correction_problem", None)
    try:
        rerun = assistant.correct(turn)
    except MemoryStoreError as exc:  # e.g. the Chroma server went away: said in the sidebar
        st.session_state["correction_problem"] = str(exc)
        return
    # Like a typed message (a stopped run cannot lose it); a double click queues one.
    if rerun is not None and rerun not in inbox():
        inbox().append(rerun)


def render_user(message: str) -> None:
    """The user's message, always as literal text, folded when very long."""
    with st.chat_message("user"):
        st.markdown(as_text(message[:SHOWN_MESSAGE_CHARS]))
        if len(message) > SHOWN_MESSAGE_CHARS:
            st.caption(f"… {len(message) - SHOWN_MESSAGE_CHARS:,} more characters not shown")


def render_compare(exchange: Exchange, always: Turn, assistant: Assistant) -> None:
    """Gated and always-retrieve side by side, each with its own badge and timing."""
    gated = exchange.gated
    left, right = st.columns(2, gap="medium")
    with left:
        st.markdown(f"##### gated · {as_text(gated.decision.gate)}")
        render_answer(gated, assistant, show_capture=False, surprise=surprise_of(exchange))
    with right:
        st.markdown("##### always retrieve")
        if always.memories and not gated.decision.retrieve:
            n = len(always.memories)
            st.caption(
                f":material/input: {n} {'memory' if n == 1 else 'memories'} went in here "
                "that the gate skipped"
            )
        render_answer(always, assistant, show_capture=False)
    # Beside one exchange's times, the session's so far: one exchange can mislead a room.
    medians = medians_line(compare_medians(exchanges(), exchange))
    st.caption(as_text(" · ".join(filter(None, (compare_line(exchange), medians)))))
    render_capture(gated, assistant)


def surprise_of(exchange: Exchange) -> str:
    """ "the talk expected skip" when this exchange's beat promised the other decision."""
    played = talk()
    return played.surprise(exchange) if played is not None else ""


def render_beat(exchange: Exchange) -> None:
    """Which beat of the talk this exchange played, and the presenter's note for it."""
    played = talk()
    beat = played.beat(exchange.beat) if played is not None else None
    if played is None or beat is None:
        return
    note = f" · {as_text(beat.note)}" if beat.note else ""
    st.caption(f":material/slideshow: beat {beat.number} / {len(played.beats)}{note}")


def render_exchange(exchange: Exchange, assistant: Assistant) -> None:
    """The assistant side of one exchange: one answer, or the compare-mode twins."""
    render_beat(exchange)
    if exchange.always is None:
        render_answer(exchange.gated, assistant, surprise=surprise_of(exchange))
    else:
        render_compare(exchange, exchange.always, assistant)


# ---- a turn while it runs ------------------------------------------------------------


def turn_opener(compare: bool) -> OpenTurn:
    """Where each turn draws while it runs (a column per twin in compare mode)."""
    columns: list = []

    def open_turn(variant: Variant, source: ReplySource) -> ReplyHooks:
        if compare and not columns:
            columns.extend(st.columns(2, gap="medium"))
        with columns[variant is Variant.ALWAYS] if compare else st.container():
            gate_slot, reply_slot = st.empty(), st.empty()
        gate_slot.caption("the gate is deciding…")
        draw = offline_markdown if source is ReplySource.OFFLINE else model_markdown
        pieces: list[str] = []
        last_draw = 0.0

        def on_decision(decision: GateDecision) -> None:
            with gate_slot.container():
                render_gate(decision)

        def on_text(piece: str) -> None:
            nonlocal last_draw
            pieces.append(piece)
            now = time.perf_counter()
            if now - last_draw >= STREAM_EVERY_S:
                last_draw = now
                reply_slot.markdown(draw("".join(pieces)) + " ▌")

        return ReplyHooks(on_decision=on_decision, on_text=on_text)

    return open_turn


def loading_box(place: DeltaGenerator) -> Callable[[ModelStatus], None]:
    """While a loading local model is waited for, a status box in `place` shows its progress."""
    box: list = []

    def on_wait(status: ModelStatus) -> None:
        if not box:
            box.append(place.status(loading_label(status), expanded=False))
        if status.loading:
            box[0].update(label=loading_label(status))
        else:
            box[0].update(label="Local model ready", state="complete")

    return on_wait
