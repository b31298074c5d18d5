"""Memory Gate: the Streamlit demo's chat page.

It takes messages (the chat box, the example buttons) into an inbox, answers the oldest
through the assistant's front (assistant/turn/front.py), has each `Exchange` drawn as it
streams and again from its record (app_turn.py), and puts the sidebar beside it
(app_sidebar.py). The logic
lives in assistant/; this page only talks to the front. Run with `streamlit run app.py`;
settings come from the environment (see README).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from app_sidebar import (
    render_connection,
    render_controls,
    render_corrections,
    render_downloads,
    render_memories,
)
from app_turn import (
    exchanges,
    inbox,
    loading_box,
    render_exchange,
    render_user,
    talk,
    turn_opener,
)
from assistant.gates.corrections.actions import Rerun
from assistant.page.display import as_text, scoreboard_tiles, stage_chart, stats_markdown
from assistant.page.inbox import CHAT_BOX_KEY
from assistant.page.session import scoreboard, session_stats, stage_rows
from assistant.page.ui import chat_box_files
from assistant.talk import TalkError, load_talk
from assistant.turn.chat import Exchange, TurnOptions
from memory.records import visible

if TYPE_CHECKING:  # building the front imports Chroma (~2.5 s): load it after the first paint
    from assistant.turn.front import Assistant

# Prompts a presenter clicks: the first three should retrieve, the last three should not.
EXAMPLES = (
    "When am I meeting Alex?",
    "What should I get Jordan for their birthday?",
    "Plan my weekend",
    "What's 2+2?",
    "Tell me a joke",
    "What's the capital of France?",
)
STAGE_COLOURS = ["#4f46e5", "#0ea5e9", "#f59e0b", "#9ca3af"]  # gate, search, reply, capture
CHAT_BOX = "memory_gate.chat_box"  # the component's name (assistant/page/ui/chat_box.*)

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
# Stage view: the chat and badges large enough for the back of a room, the settings hidden
# (hidden, not skipped: a widget that is not drawn loses its value).
STAGE_CSS = """
<style>
.st-key-controls { display: none; }
.stChatMessage p, .stChatMessage li { font-size: 1.45rem !important; line-height: 1.5; }
.stChatMessage .stMarkdownBadge { font-size: 1.8rem !important; }
.stChatMessage [data-testid="stCaptionContainer"] p { font-size: 1.1rem !important; }
.st-key-scoreboard [data-testid="stMetricValue"] { font-size: 2.6rem; }
</style>
"""


@st.cache_resource(show_spinner="Opening the memory store and loading the gate…")
def get_assistant() -> Assistant:
    """Build the store, gates and pipeline once per process, shared by every browser tab."""
    from assistant.turn.factory import build_assistant

    assistant = build_assistant()
    # A broken gate must not take the whole page down: the turn that uses it says so.
    try:
        assistant.warm()
    except Exception:  # noqa: BLE001 - logged; the first turn will show the same error
        logging.getLogger(__name__).warning("warm-up failed", exc_info=True)
    return assistant


def receive(message: str | None = None) -> None:
    """Callback of the chat box and the example buttons: new messages join the inbox.

    Callbacks run when a run starts, before the script body and before the first point
    where Streamlit can stop the run. The chat box's value is every message it has not
    seen taken (assistant/page/inbox.py), so one that a dropped or merged rerun never brought
    is taken from the next one.
    """
    if message is None:
        inbox().take(chat_box_messages(st.session_state.get(CHAT_BOX_KEY)))
        follow_talk()
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
            data={
                "taken": inbox().taken,
                "placeholder": "Ask anything…",
                "examples": EXAMPLES,
                "talk": talk_data(),
            },
            default={"sent": []},
            on_sent_change=receive,
        )
    # The callback has taken them in a browser. A run with no callback (AppTest sets the
    # box's state through its key) takes them here; either way each is taken once.
    inbox().take(chat_box_messages(state))
    follow_talk()


def talk_data() -> dict[str, object] | None:
    """What the chat box needs to send a talk's beats itself: each Next click, counted."""
    played = talk()
    if played is None:
        return None
    beats = [{"number": b.number, "say": b.say} for b in played.beats]
    return {"run": f"{played.name}#{played.run}", "beats": beats, "sent": played.sent}


def follow_talk() -> None:
    """The talk's place moves on to the last beat the chat box sent."""
    played = talk()
    if played is not None:
        played.reached(inbox().last_beat)


def new_conversation() -> None:
    """Clear the chat and anything still waiting; memories stay. A talk starts again."""
    exchanges().clear()
    inbox().clear()
    played = talk()
    if played is not None:
        played.restart()


# ---- a talk ---------------------------------------------------------------------------


def start_talk(path: str | None = None) -> None:
    """Load a talk file (the default talk without one); a broken file is said on the page."""
    from pathlib import Path

    try:
        st.session_state["talk"] = load_talk(Path(path) if path else None)
        st.session_state.pop("talk_problem", None)
    except TalkError as exc:
        st.session_state["talk_problem"] = str(exc)


def next_beat() -> None:
    """The Next button: the talk's next beat joins the inbox as if typed, with its number."""
    played = talk()
    beat = played.take() if played is not None else None
    if beat is not None:
        inbox().append(beat.say, beat=beat.number)


def talk_bar() -> None:
    """Above the chat: the Next button with the beat's number and the presenter's note."""
    played = talk()
    if st.session_state.get("talk_problem"):
        st.error(as_text(st.session_state["talk_problem"]), icon=":material/error:")
    if played is None:
        st.button("Load the default talk", icon=":material/slideshow:", on_click=start_talk)
        return
    beat = played.upcoming
    with st.container(horizontal=True, gap="small", key="talk", vertical_alignment="center"):
        if beat is None:
            st.caption(
                f":material/slideshow: {as_text(played.name)}: all {len(played.beats)} beats sent"
            )
            st.button("Start the talk again", icon=":material/replay:", on_click=new_conversation)
            return
        st.button(
            f"Next · {beat.number} / {len(played.beats)}",
            icon=":material/skip_next:",
            type="primary",
            key="talk-next",
            on_click=next_beat,
        )
        expect = f" · expect {beat.expect}" if beat.expect else ""
        note = f"  \n{as_text(beat.note)}" if beat.note else ""
        st.caption(f"“{as_text(beat.say)}”{expect}{note}")


def render_history(assistant: Assistant) -> None:
    """Every past exchange, from the Exchange records alone."""
    for exchange in exchanges():
        render_user(exchange.message)
        with st.chat_message("assistant"):
            render_exchange(exchange, assistant)


# ---- running a turn -----------------------------------------------------------------


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
                open_turn=turn_opener(options.compare),
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
    played = talk()
    beat = played.beat(first.beat) if played is not None else None
    if beat is not None and beat.compare:  # the beat shows over-interpretation side by side
        options = replace(options, compare=True)
    with head:
        render_user(getattr(first.message, "message", first.message))
        exchange = replace(run_exchange(assistant, first.message, options), beat=first.beat)
    recorded = inbox().finish(first, functools.partial(exchanges().append, exchange))
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


def render_scoreboard() -> None:
    """The stage's few large numbers, updated after each turn; each says how it was got, and
    an estimate says it is one."""
    if not exchanges():
        return
    tiles = scoreboard_tiles(scoreboard(exchanges()))
    with st.container(horizontal=True, key="scoreboard", border=True):
        for label, value, caption in tiles:
            with st.container():
                st.metric(label, value)
                st.caption(as_text(caption))


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
    with st.sidebar:
        stage = st.toggle(
            "Stage view",
            key="stage_view",
            help="Large chat and badges; the settings are hidden (their values stay).",
        )
    if stage:
        st.html(STAGE_CSS)
    example_prompts()
    bar = st.container()  # the talk's Next button, once the settings are read
    board = st.empty()  # filled after the turn, so its numbers include it
    chat_box()  # drawn before the store loads, so the input is there as soon as the page is
    try:
        assistant = get_assistant()
    except Exception as exc:  # noqa: BLE001 - e.g. a bad setting: say which, not a traceback
        st.error(
            f"**Memory Gate could not start:** {as_text(f'{type(exc).__name__}: {exc}')}",
            icon=":material/error:",
        )
        st.stop()
    talk_file = assistant.settings.talk_file  # `memory-gate demo --talk FILE`
    loaded = "talk" in st.session_state or "talk_problem" in st.session_state
    if talk_file is not None and not loaded:
        start_talk(str(talk_file))
    with bar:
        talk_bar()
    with st.sidebar, st.container(key="controls"):
        st.subheader("Connection", divider="gray")
        render_connection(assistant)
        options = render_controls(assistant, new_conversation)
    render_history(assistant)
    process_inbox(assistant, options)
    with board.container():
        render_scoreboard()
    # After the turn, so the counts include it and capture's new memories are listed.
    with st.sidebar:
        render_stats()
        render_downloads(exchanges(), talk())
        render_corrections(assistant)
        render_memories(assistant, new_conversation)
    watch_model_loading(assistant)


main()
