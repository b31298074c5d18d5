"""The demo's sidebar panels: connection, switches, corrections, memories (see app.py).

Every panel reads and changes things through the assistant's front (assistant/turn/front.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from assistant.config import GateMode
from assistant.page.display import as_text, loading_label, memory_line
from assistant.runtime.local_model import ModelState
from assistant.text import end_sentence
from assistant.turn.chat import TurnOptions

if TYPE_CHECKING:  # building the front imports Chroma (~2.5 s): load it after the first paint
    from assistant.talk import TalkPlay
    from assistant.turn.chat import Exchange
    from assistant.turn.front import Assistant

MEMORY_PAGE = 50


def delete_button(column: Any, key: str, tip: str, delete: Callable[[], Any]) -> None:
    """The small bin button at the end of a list row (memories, corrections)."""
    column.button("", icon=":material/delete:", key=key, help=tip, on_click=delete, type="tertiary")


def render_connection(assistant: Assistant) -> None:
    """Which models and endpoint are in use: a local model, a remote one, or OFFLINE."""
    s = assistant.settings
    status = assistant.model_status()
    if assistant.offline:
        st.warning(
            "**OFFLINE** · local gate + offline responder  \n"
            f"{as_text(end_sentence(assistant.offline_reason or 'no model configured'))}  \n"
            "Set `ANTHROPIC_API_KEY` (or `ANTHROPIC_BASE_URL`), or unset "
            "`MEMGATE_LOCAL_MODEL`, and restart for model replies.",
            icon=":material/cloud_off:",
        )
        return
    if status is None:
        st.markdown(
            f"**gate model** {as_text(s.gate_model)}  \n"
            f"**chat model** {as_text(s.chat_model)}  \n"
            f"**endpoint** {as_text(s.endpoint_host)}"
        )
        return
    name = as_text(status.name or "GGUF model")
    if status.ready:
        st.success(
            f"**LOCAL MODEL** · {name} · llama.cpp on 127.0.0.1 · works offline",
            icon=":material/memory:",
        )
    else:
        st.info(as_text(loading_label(status)), icon=":material/hourglass_top:")
        if status.state is ModelState.ASSEMBLING:
            st.progress(status.progress)
    if status.restarts:
        st.caption(f"restarted {status.restarts}× · {as_text(status.detail)}")
    st.button(
        "Restart local model",
        icon=":material/restart_alt:",
        on_click=assistant.restart_model,
        help="Stops llama.cpp and starts it again (a few seconds).",
        width="stretch",
        disabled=not status.ready,
    )


def render_controls(assistant: Assistant, new_conversation: Callable[[], None]) -> TurnOptions:
    """Gate mode, capture and compare switches; returns their values."""
    modes = [str(m) for m in assistant.available_gate_modes]  # the widget shows plain names
    default = str(assistant.default_gate_mode)
    mode = st.segmented_control(
        "Gate mode",
        modes,
        default=default if default in modes else modes[0],
        required=True,
        key="gate_mode",
        help=assistant.gate_modes_help(),
    )
    if assistant.offline:
        st.caption("llm and cascade need a model.")
    else:
        # What llm and cascade scored with this very model, from its measurement file:
        # never prose that goes stale when the model or the gate changes.
        trust = assistant.llm_trust()
        llm, cascade = (trust.summary(m) for m in (GateMode.LLM, GateMode.CASCADE))
        st.caption(as_text(llm) + "  \n" + as_text(cascade))
    capture = st.toggle(
        "Capture new facts",
        value=assistant.settings.capture,
        key="capture",
        help="Save facts you state about yourself, after the reply is shown.",
    )
    compare = st.toggle(
        "Compare with always-retrieve",
        value=False,
        key="compare",
        help="Answer each message twice, side by side: gated and always-retrieve.",
    )
    st.button(
        "New conversation",
        icon=":material/add_comment:",
        on_click=new_conversation,
        help="Clears the chat; your memories stay.",
        width="stretch",
    )
    return TurnOptions(gate_mode=str(mode or default), capture=capture, compare=compare)


def render_corrections(assistant: Assistant) -> None:
    """The user's corrections of the gate, newest first; any one can be deleted."""
    from assistant.gates.corrections.actions import BUTTON_LABEL, verdict
    from memory.records import MemoryStoreError

    if not assistant.keeps_corrections:
        return
    try:
        items = assistant.list_corrections()
    except MemoryStoreError as exc:  # e.g. the Chroma server went away: one line, no traceback
        st.subheader("Corrections", divider="gray")
        st.error(as_text(str(exc)), icon=":material/error:")
        return
    st.subheader(f"Corrections ({len(items)})", divider="gray")
    if st.session_state.get("correction_problem"):  # a click that could not be recorded
        st.warning(as_text(st.session_state["correction_problem"]), icon=":material/warning:")
    if not items:
        st.caption(f"None yet. Press “{BUTTON_LABEL}” under a badge to teach the gate.")
        return
    with st.container(key="correction-list"):
        for item in items:
            text_col, button_col = st.columns([7, 1], vertical_alignment="center")
            text_col.markdown(as_text(item.message))
            text_col.caption(verdict(item))
            delete_button(
                button_col,
                f"del-correction-{item.id}",
                "Delete this correction: the gate decides messages like it itself again",
                lambda id_=item.id: assistant.delete_correction(id_),
            )


def add_memory(assistant: Assistant) -> None:
    """Form callback: store the typed fact (the form clears itself), or keep why it was refused."""
    from memory.records import MemoryStoreError, visible

    text = str(st.session_state.get("memory_add", "")).strip()
    st.session_state.pop("memory_add_problem", None)
    if not visible(text):  # nothing typed, or only zero-width characters
        return
    try:
        added = assistant.add_memory(text)
    except MemoryStoreError as exc:  # too long, a server that went away: said under the form
        st.session_state["memory_add_problem"] = str(exc)
        return
    if added.flag:
        st.session_state["memory_add_problem"] = (
            f"Saved, but it {added.flag}. It is kept here and never sent to the model."
        )


def render_memories(assistant: Assistant, new_conversation: Callable[[], None]) -> None:
    """The memory browser: search, delete, add, reset to the demo persona."""
    from memory.records import MemoryStoreError

    try:
        total = assistant.memory_count()
        st.subheader(f"Memories ({total:,})", divider="gray")
        query = st.text_input("Search memories", key="memory_search", placeholder="Alex")
        if query.strip():  # ranked by similarity, no cut-off: browsing should always show some
            shown = assistant.search_memories(query, MEMORY_PAGE)
        else:
            shown = assistant.list_memories(MEMORY_PAGE)
    except MemoryStoreError as exc:  # e.g. the Chroma server went away: say what to do
        st.error(as_text(str(exc)), icon=":material/error:")
        return
    # A scrolling box keeps the controls below it on screen with 60+ memories.
    with st.container(height=360, key="memory-list"):
        for memory in shown:
            text_col, button_col = st.columns([7, 1], vertical_alignment="center")
            text_col.markdown(memory_line(memory)[2:])
            if memory.flag:
                why = as_text(memory.flag)
                text_col.caption(f":material/block: never sent to the model · {why}")
            delete_button(
                button_col,
                f"del-{memory.id}",
                "Delete this memory",
                lambda id_=memory.id: assistant.delete_memory(id_),
            )
        if not shown:
            st.caption("No memories.")
        elif not query.strip() and total > MEMORY_PAGE:
            st.caption(f"Newest {MEMORY_PAGE} shown; search to find the others.")
    with st.form("add-memory", clear_on_submit=True, border=False):
        st.text_input("Add a memory", key="memory_add", placeholder="I'm allergic to peanuts")
        st.form_submit_button("Add", icon=":material/add:", on_click=add_memory, args=(assistant,))
    if st.session_state.get("memory_add_problem"):
        st.warning(as_text(st.session_state["memory_add_problem"]), icon=":material/warning:")
    render_reset(assistant, new_conversation)


def render_reset(assistant: Assistant, new_conversation: Callable[[], None]) -> None:
    """Reset demo, behind a confirmation: the persona back exactly and a fresh chat."""
    with st.popover("Reset demo", icon=":material/restart_alt:"):
        if not assistant.is_demo_store:
            st.caption(
                f"Reset restores the demo persona, and these memories are "
                f"{as_text(assistant.store.user_id)}'s: it is off here."
            )
            return
        st.caption(
            "Clears the chat and restores the demo persona's memories exactly: memories "
            "added since are deleted."
        )
        keep = st.checkbox("Keep my gate corrections", key="reset-keep-corrections")
        st.button(
            "Reset the demo",
            key="reset-demo",
            type="primary",
            on_click=reset_demo,
            args=(assistant, new_conversation, keep),
        )


def reset_demo(
    assistant: Assistant, new_conversation: Callable[[], None], keep_corrections: bool
) -> None:
    """The Reset button's callback: memories and corrections first, then the chat."""
    assistant.reset_demo(keep_corrections)
    new_conversation()


def render_downloads(exchanges: Sequence[Exchange], played: TalkPlay | None) -> None:
    """Download session: Markdown and JSON (with the talk's beats), and the chart as SVG."""
    if not exchanges:
        return
    from assistant.page.export import session_json, session_markdown, stage_chart_svg

    beats = played.beats if played is not None else ()
    st.caption("Download session")
    files = (
        ("Markdown", session_markdown(exchanges, beats), "md", "text/markdown", "download"),
        ("JSON", session_json(exchanges, beats), "json", "application/json", "download"),
        ("Chart (SVG)", stage_chart_svg(exchanges), "svg", "image/svg+xml", "bar_chart"),
    )
    with st.container(horizontal=True, gap="small"):
        for label, data, ext, mime, icon in files:
            st.download_button(
                label,
                data,
                file_name=f"memory-gate-session.{ext}",
                mime=mime,
                icon=f":material/{icon}:",
                key=f"download-{ext}",
                on_click="ignore",  # a download must not rerun the page mid-talk
            )
