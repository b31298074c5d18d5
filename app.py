"""Memory Gate: the Streamlit demo. It renders `Turn` records; the logic lives in assistant/.

Run with `streamlit run app.py`. Settings come from the environment (see README).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from assistant import gate_modes
from assistant.corrections import BUTTON_LABEL, Rerun, can_correct, opposite_label
from assistant.session import STAGES, exchanges, session_stats, stage_rows
from assistant.text import end_sentence
from memory.records import visible

if TYPE_CHECKING:  # the pipeline imports Chroma (~2.5 s): load it after the first paint
    from assistant.factory import Assistant
    from assistant.gate import GateDecision
    from assistant.local_model import ModelStatus
    from assistant.pipeline import Turn
    from memory.records import Memory

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
MEMORY_PAGE = 50
STAGE_COLOURS = ["#4f46e5", "#0ea5e9", "#f59e0b", "#9ca3af"]  # gate, search, reply, capture
STREAM_EVERY_S = 0.05  # redraw the streaming reply at most 20 times a second
CHAT_KEY = "chat"

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


def redact(text: str, assistant: Assistant) -> str:
    """Belt and braces: the API key never reaches the screen, whatever an error says."""
    key = assistant.settings.api_key
    return text.replace(key, "[api key]") if key else text


def fmt_ms(ms: float | None) -> str:
    """Milliseconds for people: one decimal when small."""
    if ms is None:
        return "–"
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:,.0f} ms"


@st.cache_resource(show_spinner="Opening the memory store and loading the gate…")
def get_assistant() -> Assistant:
    """Build the store, gates and pipeline once per process, shared by every browser tab."""
    from assistant.factory import build_assistant

    assistant = build_assistant()
    # Pay every first-use cost now, not on the presenter's first click: the local gate's
    # weights and its first inference, and the store's first search. A broken gate must not
    # take the whole page down: the turn that uses it shows the error instead.
    local = getattr(assistant.pipeline.gate, "local", assistant.pipeline.gate)
    try:
        if hasattr(local, "warm"):
            local.warm()
            local.probability("When is my dentist appointment?")
        assistant.store.search("dentist appointment", k=1)
    except Exception:  # noqa: BLE001 - logged; the first turn will show the same error
        logging.getLogger(__name__).warning("warm-up failed", exc_info=True)
    return assistant


def turns() -> list[Turn]:
    """This browser session's conversation: the Turn records, oldest first."""
    return st.session_state.setdefault("turns", [])


def inbox() -> list[str | Rerun]:
    """Messages sent but not yet answered, oldest first (see process_inbox).

    A `Rerun` is a message answered again after the user corrected a skip: it waits in the
    same queue and takes the same turn path, with its decision already made.
    """
    return st.session_state.setdefault("inbox", [])


def receive(message: str | None = None) -> None:
    """Callback of the chat input and the example buttons: the message joins the inbox.

    Streamlit stops a run as soon as the next message arrives (fastReruns), at the first
    `st.` call it makes. A message read from `st.chat_input`'s return value is therefore
    lost whenever the next one comes before the run reaches that line. Callbacks run when
    a run starts, before the script body and before the first point where it can be
    stopped. (The bigger cause of lost bursts was the file watcher: see assistant/cli.py.)
    """
    text = st.session_state.get(CHAT_KEY) if message is None else message
    # Empty messages are ignored, and so are ones of only zero-width characters: the model
    # would answer its own prompt (the issue saw the system prompt's words come back).
    if isinstance(text, str) and visible(text):
        inbox().append(text.strip())


def new_conversation() -> None:
    """Clear the chat and anything still waiting; memories stay."""
    turns().clear()
    inbox().clear()


# ---- rendering a turn ---------------------------------------------------------------


def render_gate(decision: GateDecision) -> None:
    """The hero: badge, the gate's reason in its own words, the query, the gate's time."""
    parts = [BADGES[decision.label], f"**{as_text(decision.badge_reason or 'no reason given')}**"]
    if decision.retrieve and decision.query:
        parts.append(f"query “{as_text(decision.query)}”")
    parts.append(f"{fmt_ms(decision.elapsed_ms)} · gate: {as_text(decision.gate)}")
    st.markdown(" &nbsp;·&nbsp; ".join(parts))


def render_memory_line(memory: Memory) -> str:
    """One memory as a markdown list item, its text escaped."""
    score = "" if memory.similarity is None else f"`{memory.similarity:.2f}` "
    return f"- {score}{as_text(memory.text)}"


def render_details(turn: Turn) -> None:
    """The expander under the badge: memories used and the time of each stage."""
    if not turn.decision.retrieve:
        title = "Details · memory not searched"
    else:
        n = len(turn.memories)
        title = f"Details · {n} {'memory' if n == 1 else 'memories'} used"
        if turn.withheld:
            title += f" · {len(turn.withheld)} withheld"
    with st.expander(title):
        if turn.decision.badge_reason != turn.decision.reason:
            st.markdown(f"**The gate's whole reason:** {as_text(turn.decision.reason)}")
        if turn.memories:
            st.markdown("**Memories given to the reply** (similarity · text)")
            st.markdown("\n".join(render_memory_line(m) for m in turn.memories))
        elif turn.decision.retrieve and not turn.withheld:
            st.caption("Searched: nothing scored above the relevance cut-off.")
        if turn.withheld:
            st.markdown("**Withheld from the reply** (memory is data, never instructions)")
            lines = [f"{render_memory_line(m)} · *{as_text(m.flag or '')}*" for m in turn.withheld]
            st.markdown("\n".join(lines))
        if turn.capture is not None and turn.capture.dropped:
            st.markdown("**Suggested by the capture model, not saved** (not in your words)")
            st.markdown("\n".join(f"- {as_text(fact)}" for fact in turn.capture.dropped))
        t, u = turn.timings, turn.usage
        stages = {
            "gate": fmt_ms(t.gate_ms),
            "search": fmt_ms(t.search_ms) if turn.decision.retrieve else "skipped",
            "first token": fmt_ms(t.first_token_ms),
            "reply": fmt_ms(t.reply_ms),
            "capture": fmt_ms(t.capture_ms) if turn.capture else "–",
            "total": fmt_ms(t.total_ms),
            "ours (outside model calls)": fmt_ms(t.overhead_ms),
        }
        # One row, a column per stage: compact enough to sit under every reply.
        st.markdown(
            "| " + " | ".join(stages) + " |\n"
            "|" + "---:|" * len(stages) + "\n"
            "| " + " | ".join(stages.values()) + " |"
        )
        st.caption(
            f"tokens · gate {u.gate_input} in / {u.gate_output} out · "
            f"reply {u.chat_input} in / {u.chat_output} out · "
            f"memories ~{u.memory_tokens} · decided by {turn.decision.method.value}"
        )


def render_answer(turn: Turn, assistant: Assistant, *, show_capture: bool = True) -> None:
    """The assistant side of one turn: reply, error, badge line, notices, capture, details."""
    if turn.reply:
        if turn.reply_source == "offline":
            st.markdown(offline_markdown(turn.reply))
            why = assistant.offline_reason or "no model configured"
            st.caption(f":material/cloud_off: offline responder · {as_text(why)}")
        else:
            st.markdown(model_markdown(turn.reply))
    if turn.error:
        st.error(
            f"**Something went wrong:** {as_text(redact(turn.error, assistant))}  \n"
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
    st.caption(f"{icon} {as_text(redact(turn.capture.summary, assistant))}")


def render_user(message: str) -> None:
    """The user's message, always as literal text, folded when very long."""
    with st.chat_message("user"):
        st.markdown(as_text(message[:SHOWN_MESSAGE_CHARS]))
        if len(message) > SHOWN_MESSAGE_CHARS:
            st.caption(f"… {len(message) - SHOWN_MESSAGE_CHARS:,} more characters not shown")


def render_compare(gated: Turn, always: Turn, assistant: Assistant) -> None:
    """Gated and always-retrieve side by side, each with its own badge and timing."""
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
    st.caption(as_text(compare_line(gated, always)))
    render_capture(gated, assistant)


def compare_line(gated: Turn, always: Turn) -> str:
    """What the twins measured: first token and memory tokens sent, and which ran first.

    The second run of a pair reuses what the first warmed (llama.cpp's prompt cache, the
    model's first-use costs), so the order alternates between exchanges and is said here:
    a difference in one exchange can be the order, not the gate.
    """
    first = "gated" if gated.id < always.id else "always-retrieve"
    return (
        f"first token: gated {fmt_ms(gated.timings.first_token_ms)}, always-retrieve "
        f"{fmt_ms(always.timings.first_token_ms)} · memory tokens sent: gated "
        f"~{gated.usage.memory_tokens:,}, always-retrieve ~{always.usage.memory_tokens:,} · "
        f"{first} ran first (the order alternates; the second reuses the first's warm cache)"
    )


def render_history(assistant: Assistant) -> None:
    """Every past exchange, from the Turn records alone."""
    for group in exchanges(turns()):
        render_user(group.gated.message)
        with st.chat_message("assistant"):
            if group.always is None:
                render_answer(group.gated, assistant)
            else:
                render_compare(group.gated, group.always, assistant)


# ---- corrections (issue 23): a "Wrong decision?" click teaches the gate ---------------


def render_correction(turn: Turn, assistant: Assistant) -> None:
    """Under a badge: the "Wrong decision?" button, or the correction already made."""
    from assistant.corrections import correction_for, verdict

    book = assistant.corrections
    if book is None or not can_correct(turn.decision):
        return  # failed open, a rule, an empty message: nothing was judged
    standing = correction_for(book, turn.message)
    if standing is not None and standing.retrieve != turn.decision.retrieve:
        st.caption(f":material/school: you corrected this: {as_text(verdict(standing))}")
        return
    st.button(
        BUTTON_LABEL,
        key=f"wrong-{turn.id}",  # turn ids are unique in the process: one button per turn
        icon=":material/thumb_down:",
        type="tertiary",
        help=f"Record that this message {opposite_label(turn.decision)}; "
        "the gate then decides messages like it that way.",
        on_click=correct_turn,
        args=(assistant, turn),
    )


def correct_turn(assistant: Assistant, turn: Turn) -> None:
    """Button callback: record the opposite decision; a corrected skip is answered again."""
    from assistant.corrections import rerun_of
    from memory.records import MemoryStoreError

    st.session_state.pop("correction_problem", None)
    try:
        result = assistant.correct(turn.message, turn.decision)
    except MemoryStoreError as exc:  # e.g. the Chroma server went away: said in the sidebar
        st.session_state["correction_problem"] = str(exc)
        return
    rerun = rerun_of(result, turn.message)
    # Through the inbox, like a typed message, so a run stopped mid-answer cannot lose it;
    # a second click on the same badge before the page redraws queues nothing more.
    if rerun is not None and rerun not in inbox():
        inbox().append(rerun)


def render_corrections(assistant: Assistant) -> None:
    """The sidebar's list of the user's corrections, newest first; any one can be deleted."""
    from assistant.corrections import verdict

    book = assistant.corrections
    if book is None:
        return
    items = book.list()
    st.subheader(f"Corrections ({len(items)})", divider="gray")
    if st.session_state.get("correction_problem"):
        st.warning(as_text(st.session_state["correction_problem"]), icon=":material/warning:")
    if not items:
        st.caption(f"None yet. Press “{BUTTON_LABEL}” under a badge to teach the gate.")
        return
    with st.container(key="correction-list"):
        for item in items:
            text_col, button_col = st.columns([7, 1], vertical_alignment="center")
            text_col.markdown(as_text(item.message))
            text_col.caption(verdict(item))
            button_col.button(
                "",
                icon=":material/delete:",
                key=f"del-correction-{item.id}",
                help="Delete this correction: the gate decides messages like it itself again",
                on_click=book.delete,
                args=(item.id,),
                type="tertiary",
            )


# ---- running a turn -----------------------------------------------------------------


def live_respond(
    assistant: Assistant,
    message: str,
    gate_mode: str,
    variant: str,
    decision: GateDecision | None = None,
) -> Turn:
    """Run one pipeline response, drawing the badge and streaming the reply as they come."""
    gate_slot, reply_slot = st.empty(), st.empty()
    gate_slot.caption("the gate is deciding…")
    pieces: list[str] = []
    last_draw = 0.0
    draw: Callable[[str], str] = offline_markdown if assistant.offline else model_markdown

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

    return assistant.pipeline.respond(
        message,
        turns(),
        gate=assistant.gate(gate_mode),
        on_text=on_text,
        on_decision=on_decision,
        variant=variant,
        decision=decision,
    )


def run_turn(
    assistant: Assistant,
    message: str,
    gate_mode: str,
    capture: bool,
    compare: bool,
    decision: GateDecision | None = None,
) -> list[Turn]:
    """Answer one message (twice in compare mode), capture once; returns the Turn records.

    `decision` forces the gated answer's decision (a re-run after a correction).
    """
    with st.chat_message("assistant"):
        notice = wait_for_model(assistant)
        slot = st.empty()
        try:
            with slot.container():
                if compare:
                    left, right = st.columns(2, gap="medium")
                    # Alternate which twin runs first: the second gets a warm cache.
                    if sum(t.variant == "always" for t in turns()) % 2:
                        with right:
                            always = live_respond(assistant, message, "always", "always")
                        with left:
                            gated = live_respond(assistant, message, gate_mode, "gated", decision)
                    else:
                        with left:
                            gated = live_respond(assistant, message, gate_mode, "gated", decision)
                        with right:
                            always = live_respond(assistant, message, "always", "always")
                else:
                    gated = live_respond(assistant, message, gate_mode, "gated", decision)
                    always = None
            if capture:  # after the reply is on screen, so capture never delays it
                gated = assistant.pipeline.capture(gated)
        except Exception as exc:  # noqa: BLE001 - one broken turn must not end the demo
            logging.getLogger(__name__).exception("turn failed")
            problem = redact(f"{type(exc).__name__}: {exc}", assistant)
            return [failed_turn(message, exc, f"this turn failed: {problem}")]
        if notice:  # the model was restarted, or replies fell back to offline: say so
            gated = replace(gated, notice=" ".join(filter(None, (notice, gated.notice))))
        done = [gated] if always is None else [gated, always]
        with slot.container():  # redraw from the records, exactly as history will show it
            if always is None:
                render_answer(gated, assistant)
            else:
                render_compare(gated, always, assistant)
        return done


def failed_turn(message: str, exc: Exception, error: str) -> Turn:
    """A turn that broke before the pipeline finished it: kept, so the message is not lost."""
    from assistant.gate import failed_open_decision
    from assistant.pipeline import Turn

    return Turn(message=message, decision=failed_open_decision("app", message, exc), error=error)


def wait_for_model(assistant: Assistant) -> str | None:
    """Before a turn: wait for a loading local model, showing progress; returns any notice."""
    status = assistant.model_status()
    if status is not None and status.loading:
        with st.status(f"Loading the local model… {status.detail}", expanded=False) as box:
            while status.loading:
                box.update(label=loading_label(status))
                status = assistant.local.wait_ready(0.25)
            box.update(label="Local model ready", state="complete")
    return assistant.prepare_turn(0)


def process_inbox(assistant: Assistant, mode: str, capture: bool, compare: bool) -> None:
    """Answer the oldest waiting message; the others wait on screen, in order, until their turn.

    A message goes into the inbox (session state) the moment its run starts (`receive`).
    If Streamlit stops this run because another message was sent, the unanswered one is
    still in the inbox, and the next run answers it first: no message is ever lost.
    """
    waiting = inbox()
    if not waiting:
        return
    head = st.container()
    for later in waiting[1:]:
        render_user(later.message if isinstance(later, Rerun) else later)
        st.caption(":material/schedule: waiting for the reply above")
    with head:
        item = waiting[0]
        if isinstance(item, Rerun):
            render_user(item.message)
            # Its facts were captured when the message was first answered.
            done = run_turn(assistant, item.message, mode, False, compare, item.decision)
        else:
            render_user(item)
            done = run_turn(assistant, item, mode, capture, compare)
    turns().extend(done)
    waiting.pop(0)
    if waiting:
        st.rerun()  # draw the finished turn as history, then answer the next one


# ---- sidebar ------------------------------------------------------------------------


def loading_label(status: ModelStatus) -> str:
    """ "Loading the local model… assembling 45%" and the like."""
    what = status.detail or status.state
    if status.state == "assembling":
        return f"Setting up the local model (once): {what} {status.progress:.0%}"
    return f"Loading the local model… {what}"


def render_connection(assistant: Assistant) -> None:
    """Which models and endpoint are in use: a local model, a remote one, or OFFLINE."""
    s = assistant.settings
    assistant.fall_back_if_failed()
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
        if status.state == "assembling":
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


def watch_model_loading(assistant: Assistant) -> None:
    """While the local model loads, keep the page alive and redraw it once it is ready."""
    status = assistant.model_status()
    if status is None or not status.loading:
        return
    # The page is fully drawn and usable above: the chat input takes messages (sending
    # one just starts a new run). Here we only wait, so the sidebar can say "ready".
    while status.loading:
        status = assistant.local.wait_ready(0.5)
    st.rerun()


def render_controls(assistant: Assistant) -> tuple[str, bool, bool]:
    """Gate mode, capture and compare switches; returns their values."""
    modes = list(assistant.available_gate_modes)
    default = assistant.pipeline.gate.name
    mode = st.segmented_control(
        "Gate mode",
        modes,
        default=default if default in modes else modes[0],
        required=True,
        key="gate_mode",
        help=gate_modes.help_text(),
    )
    if assistant.offline:
        st.caption("llm and cascade need a model.")
    else:
        # What llm and cascade scored with this very model, from its measurement file:
        # never prose that goes stale when the model or the gate changes.
        trust = assistant.llm_trust()
        st.caption(as_text(trust.summary("llm")) + "  \n" + as_text(trust.summary("cascade")))
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
    return str(mode or default), capture, compare


def render_stats() -> None:
    """Turns, searches skipped, memory tokens not injected, and ms per stage per turn."""
    st.subheader("This session", divider="gray")
    stats = session_stats(turns())
    if not stats.turns:
        st.caption("No turns yet. Click an example prompt to start.")
        return
    st.markdown(
        f"**{stats.turns}** {'turn' if stats.turns == 1 else 'turns'} · "
        f"**{stats.skipped}** {'search' if stats.skipped == 1 else 'searches'} skipped  \n"
        f"**~{stats.memory_tokens_not_injected:,}** memory tokens not injected  \n"
        f"median overhead outside model calls **{fmt_ms(stats.median_overhead_ms)}**"
    )
    # An inline Vega-Lite spec: no pandas or altair import (~3 s) in front of an audience,
    # and a legend that fits the sidebar.
    st.vega_lite_chart(
        spec={
            "data": {"values": stage_rows(turns())},
            "mark": {"type": "bar", "tooltip": True},
            "encoding": {
                "x": {"field": "turn", "type": "ordinal", "axis": {"labelAngle": 0}},
                "y": {"field": "ms", "type": "quantitative", "aggregate": "sum", "title": "ms"},
                "color": {
                    "field": "stage",
                    "type": "nominal",
                    "scale": {"domain": list(STAGES), "range": STAGE_COLOURS},
                    "legend": {"orient": "bottom", "columns": 2, "title": None},
                },
                "order": {"field": "order", "type": "quantitative"},
            },
        },
        width="stretch",
        height=260,
    )


def add_memory(assistant: Assistant) -> None:
    """Form callback: store the typed fact (the form clears itself), or keep why it was refused."""
    from memory.records import MemoryStoreError, visible

    text = str(st.session_state.get("memory_add", "")).strip()
    st.session_state.pop("memory_add_problem", None)
    if not visible(text):  # nothing typed, or only zero-width characters
        return
    try:
        added = assistant.store.remember(text, source="typed")
    except MemoryStoreError as exc:  # too long, a server that went away: said under the form
        st.session_state["memory_add_problem"] = str(exc)
        return
    if added.flag:
        st.session_state["memory_add_problem"] = (
            f"Saved, but it {added.flag}. It is kept here and never sent to the model."
        )


def reset_memories(assistant: Assistant) -> None:
    """Replace every memory with the demo persona."""
    from memory.persona import seed_demo

    assistant.store.clear()
    seed_demo(assistant.store)


def render_memories(assistant: Assistant) -> None:
    """The memory browser: search, delete, add, reset to the demo persona."""
    from memory.records import MemoryStoreError

    store = assistant.store
    try:
        total = store.count()
        st.subheader(f"Memories ({total:,})", divider="gray")
        query = st.text_input("Search memories", key="memory_search", placeholder="Alex")
        if query.strip():  # ranked by similarity, no cut-off: browsing should always show some
            shown = store.search(query, k=MEMORY_PAGE, min_similarity=-1.0)
        else:
            shown = store.list(0, MEMORY_PAGE)
    except MemoryStoreError as exc:  # e.g. the Chroma server went away: say what to do
        st.error(as_text(str(exc)), icon=":material/error:")
        return
    # A scrolling box keeps the controls below it on screen with 60+ memories.
    with st.container(height=360, key="memory-list"):
        for memory in shown:
            text_col, button_col = st.columns([7, 1], vertical_alignment="center")
            text_col.markdown(render_memory_line(memory)[2:])
            if memory.flag:
                why = as_text(memory.flag)
                text_col.caption(f":material/block: never sent to the model · {why}")
            button_col.button(
                "",
                icon=":material/delete:",
                key=f"del-{memory.id}",
                help="Delete this memory",
                on_click=store.delete,
                args=(memory.id,),
                type="tertiary",
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
    with st.popover("Reset to demo persona", icon=":material/restart_alt:"):
        st.caption("Deletes every memory, including ones you added, and loads the demo persona.")
        st.button(
            "Replace all memories",
            key="reset-demo",
            type="primary",
            on_click=reset_memories,
            args=(assistant,),
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
    # Drawn before the store loads, so the input is there as soon as the page is.
    st.chat_input("Ask anything…", key=CHAT_KEY, on_submit=receive)
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
        mode, capture, compare = render_controls(assistant)
    render_history(assistant)
    process_inbox(assistant, mode, capture, compare)
    # After the turn, so the counts include it and capture's new memories are listed.
    with st.sidebar:
        render_stats()
        render_corrections(assistant)
        render_memories(assistant)
    watch_model_loading(assistant)


main()
