"""Memory Gate: the Streamlit demo's chat page.

It takes messages (the chat box, the example buttons) into an inbox, answers the oldest
through the assistant's front (assistant/front.py), draws each `Exchange` as it streams
and again from its record, and puts the sidebar beside it (app_sidebar.py). The logic
lives in assistant/; this page only talks to the front. Run with `streamlit run app.py`;
settings come from the environment (see README).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import streamlit as st

from app_sidebar import render_connection, render_controls, render_corrections, render_memories
from assistant.chat import Exchange, OpenTurn, ReplyHooks, TurnOptions
from assistant.display import (
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
    stage_chart,
    stage_table,
    stats_markdown,
    tokens_line,
    wrong_help,
    you_corrected,
)
from assistant.gates.corrections.actions import BUTTON_LABEL, Rerun
from assistant.inbox import CHAT_BOX_KEY, Inbox
from assistant.pipeline import Variant
from assistant.respond import ReplySource
from assistant.session import compare_medians, session_stats, stage_rows
from assistant.ui import chat_box_files
from memory.records import MemoryStoreError, visible

if TYPE_CHECKING:  # building the front imports Chroma (~2.5 s): load it after the first paint
    from streamlit.delta_generator import DeltaGenerator

    from assistant.front import Assistant
    from assistant.gates.base import GateDecision
    from assistant.local_model import ModelStatus
    from assistant.pipeline import Turn

# Prompts a presenter clicks: the first three should retrieve, the last three should not.
EXAMPLES = (
    "When am I meeting Alex?",
    "What should I get Jordan for their birthday?",
    "Plan my weekend",
    "What's 2+2?",
    "Tell me a joke",
    "What's the capital of France?",
)
BADGES = {  # one colour per decision, readable from the back of the room
    "retrieved": ":blue-badge[:material/manage_search: RETRIEVED]",
    "skipped": ":green-badge[:material/bolt: SKIPPED]",
    "failed open": ":orange-badge[:material/warning: FAILED OPEN]",
}
SHOWN_MESSAGE_CHARS = 3_000  # longer messages are folded on screen, not in the pipeline
STAGE_COLOURS = ["#4f46e5", "#0ea5e9", "#f59e0b", "#9ca3af"]  # gate, search, reply, capture
STREAM_EVERY_S = 0.05  # redraw the streaming reply at most 20 times a second
CHAT_BOX = "memory_gate.chat_box"  # the component's name (assistant/ui/chat_box.*)

# Our own static CSS only: never user content (that is always escaped markdown).
CSS = """
<style>
.stMainBlockContainer { padding-top: 2rem; }
.st-key-examples button { min-height: 2rem; padding: 0.1rem 0.7rem; }
.st-key-memory-list p { font-size: 0.875rem; line-height: 1.35; }
.stChatMessage .stMarkdownBadge {
  font-size: 1.35rem !important; font-weight: 700; padding: 0.15em 0.55em;
  letter-spacing: 0.04em;
}
.stChatMessage [data-testid="stMarkdownContainer"]:has(.stMarkdownBadge) p {
  font-size: 1.1rem;
}
</style>
"""


@st.cache_resource(show_spinner="Opening the memory store and loading the gate…")
def get_assistant() -> Assistant:
    """Build the store, gates and pipeline once per process, shared by every browser tab."""
    from assistant.factory import build_assistant

    assistant = build_assistant()
    # A broken gate must not take the whole page down: the turn that uses it says so.
    try:
        assistant.warm()
    except Exception:  # noqa: BLE001 - logged; the first turn will show the same error
        logging.getLogger(__name__).warning("warm-up failed", exc_info=True)
    return assistant


def exchanges() -> list[Exchange]:
    """This browser session's conversation: the Exchange records, oldest first."""
    return st.session_state.setdefault("exchanges", [])


def inbox() -> Inbox:
    """Messages sent but not yet answered, oldest first (see process_inbox).

    A `Rerun` (a corrected skip, answered again) waits in the same queue and takes the
    same path as a typed message.
    """
    return st.session_state.setdefault("inbox", Inbox())


def receive(message: str | None = None) -> None:
    """Callback of the chat box and the example buttons: new messages join the inbox.

    Callbacks run when a run starts, before the script body and before the first point
    where Streamlit can stop the run. The chat box's value is every message it has not
    seen taken (assistant/inbox.py), so one that a dropped or merged rerun never brought
    is taken from the next one.
    """
    if message is None:
        inbox().take(chat_box_messages(st.session_state.get(CHAT_BOX_KEY)))
    # Empty messages are ignored, and so are ones of only zero-width characters: the model
    # would answer its own prompt, the system prompt's words coming back as the reply.
    elif visible(message):
        inbox().append(message.strip())


def chat_box_messages(state: object) -> object:
    """The `sent` list in the chat box's state (None before the box has sent anything)."""
    return state.get("sent") if isinstance(state, Mapping) else None


def chat_box() -> None:
    """The chat input at the bottom of the page; Enter sends, and it clears (chat_box.js)."""
    files = chat_box_files()
    mount = st.components.v2.component(CHAT_BOX, html=files.html, css=files.css, js=files.js)
    with st.bottom:
        state = mount(
            key=CHAT_BOX_KEY,
            # `taken` lets the box forget what the inbox holds; the examples' clicks go
            # through the box too, to keep their place among typed messages.
            data={"taken": inbox().taken, "placeholder": "Ask anything…", "examples": EXAMPLES},
            default={"sent": []},
            on_sent_change=receive,
        )
    # The callback has taken them in a browser. A run with no callback (AppTest sets the
    # box's state through its key) takes them here; either way each is taken once.
    inbox().take(chat_box_messages(state))


def new_conversation() -> None:
    """Clear the chat and anything still waiting; memories stay."""
    exchanges().clear()
    inbox().clear()


# ---- rendering a turn ---------------------------------------------------------------


def render_gate(decision: GateDecision) -> None:
    """The hero: badge, the gate's reason in its own words, the query, the gate's time."""
    parts = [BADGES[decision.label], f"**{as_text(decision.badge_reason or 'no reason given')}**"]
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


def render_answer(turn: Turn, assistant: Assistant, *, show_capture: bool = True) -> None:
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
    render_gate(turn.decision)
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
        render_answer(gated, assistant, show_capture=False)
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


def render_exchange(exchange: Exchange, assistant: Assistant) -> None:
    """The assistant side of one exchange: one answer, or the compare-mode twins."""
    if exchange.always is None:
        render_answer(exchange.gated, assistant)
    else:
        render_compare(exchange, exchange.always, assistant)


def render_history(assistant: Assistant) -> None:
    """Every past exchange, from the Exchange records alone."""
    for exchange in exchanges():
        render_user(exchange.message)
        with st.chat_message("assistant"):
            render_exchange(exchange, assistant)


# ---- running a turn -----------------------------------------------------------------


def turn_opener(assistant: Assistant, compare: bool) -> OpenTurn:
    """Where each turn draws while it runs (a column per twin in compare mode)."""
    columns: list = []

    def open_turn(variant: Variant) -> ReplyHooks:
        if compare and not columns:
            columns.extend(st.columns(2, gap="medium"))
        with columns[variant is Variant.ALWAYS] if compare else st.container():
            gate_slot, reply_slot = st.empty(), st.empty()
        gate_slot.caption("the gate is deciding…")
        draw = offline_markdown if assistant.offline else model_markdown
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


def run_exchange(assistant: Assistant, message: str | Rerun, options: TurnOptions) -> Exchange:
    """Answer one message through the chat, drawing as it goes, then redraw from the record."""
    with st.chat_message("assistant"):
        on_wait = loading_box(st.container())  # above the reply, and kept there
        slot = st.empty()
        with slot.container():
            exchange = assistant.answer(
                message,
                exchanges(),
                options,
                open_turn=turn_opener(assistant, options.compare),
                on_wait=on_wait,
            )
        with slot.container():  # exactly as history will show it
            render_exchange(exchange, assistant)
    return exchange


def process_inbox(assistant: Assistant, options: TurnOptions) -> None:
    """Answer the oldest waiting message; the others wait on screen, in order, until their turn.

    A message goes into the inbox (session state) the moment its run starts (`receive`).
    If Streamlit stops this run because another message was sent, the unanswered one is
    still in the inbox, and the next run answers it first: no message is ever lost. A
    stopped run may still finish its answer while the next run starts the same one: the
    inbox records the first answer to finish and drops the other.
    """
    waiting = inbox().waiting()
    if not waiting:
        return
    first = waiting[0]
    head = st.container()
    for later in waiting[1:]:
        render_user(getattr(later.message, "message", later.message))
        st.caption(":material/schedule: waiting for the reply above")
    with head:
        render_user(getattr(first.message, "message", first.message))
        exchange = run_exchange(assistant, first.message, options)
    recorded = inbox().finish(first, lambda: exchanges().append(exchange))
    # Draw the finished turn as history, then answer the next one; if another run's
    # answer was recorded instead, draw that one.
    if len(inbox()) or not recorded:
        st.rerun()


# ---- sidebar ------------------------------------------------------------------------


def watch_model_loading(assistant: Assistant) -> None:
    """While the local model loads, keep the page alive and redraw it once it is ready."""
    status = assistant.model_status()
    if status is None or not status.loading:
        return
    # The page is fully drawn and usable above: the chat input takes messages (sending
    # one just starts a new run). Here we only wait, so the sidebar can say "ready".
    while status is not None and status.loading:
        status = assistant.wait_for_model(0.5)
    st.rerun()


def render_stats() -> None:
    """Turns, searches skipped, memory tokens not injected, and ms per stage per turn."""
    st.subheader("This session", divider="gray")
    stats = session_stats(exchanges())
    if not stats.turns:
        st.caption("No turns yet. Click an example prompt to start.")
        return
    st.markdown(stats_markdown(stats))
    st.vega_lite_chart(
        spec=stage_chart(stage_rows(exchanges()), STAGE_COLOURS), width="stretch", height=260
    )


# ---- the page -----------------------------------------------------------------------


def example_prompts() -> None:
    """The example buttons: a click sends the prompt, as if typed."""
    with st.container(horizontal=True, gap="small", key="examples"):
        for text in EXAMPLES:
            st.button(text, type="secondary", on_click=receive, args=(text,))


def main() -> None:
    """Draw the page; run a turn when a message arrives."""
    # An emoji, not a :material/…: icon: Streamlit fetches a material favicon from
    # fonts.gstatic.com, and the page must make no request off the machine.
    st.set_page_config(page_title="Memory Gate", page_icon="🧠", layout="wide")
    st.html(CSS)
    st.title("Memory Gate")
    st.caption(
        "Before each reply a gate decides whether your message needs your long-term memory. "
        "The badge under every answer says what it decided and why."
    )
    example_prompts()
    chat_box()  # drawn before the store loads, so the input is there as soon as the page is
    try:
        assistant = get_assistant()
    except Exception as exc:  # noqa: BLE001 - e.g. a bad setting: say which, not a traceback
        st.error(
            f"**Memory Gate could not start:** {as_text(f'{type(exc).__name__}: {exc}')}",
            icon=":material/error:",
        )
        st.stop()
    with st.sidebar:
        st.subheader("Connection", divider="gray")
        render_connection(assistant)
        options = render_controls(assistant, new_conversation)
    render_history(assistant)
    process_inbox(assistant, options)
    # After the turn, so the counts include it and capture's new memories are listed.
    with st.sidebar:
        render_stats()
        render_corrections(assistant)
        render_memories(assistant)
    watch_model_loading(assistant)


main()
