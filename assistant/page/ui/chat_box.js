// Memory Gate's chat box: a text box at the bottom of the page. Enter sends, Shift+Enter
// starts a new line, and the box clears once the message is handed over.
//
// Why not st.chat_input: its value is a one-shot trigger. When messages come faster than
// Streamlit starts script runs (a busy machine), a trigger carried by a run that never
// starts, or merged into a newer one, is gone (issue 29). This box's value is state:
// every message the server has not yet taken, each with a number that only grows. Any
// rerun carries all of them, and the server takes each number once (assistant/page/inbox.py).
//
// A click on one of the example buttons above the chat is sent here too, so it keeps its
// place among typed messages, and so is a click on a talk's Next button: the box counts the
// clicks itself and sends each beat with its number, so a burst of clicks sends every beat,
// in order. Without this script the buttons work through Streamlit.

// Module state lives as long as the page: re-renders and remounts of the box keep it.
let lastId = 0; // the number of the last message sent from this page
let unconfirmed = []; // messages sent and not yet taken by the server
let taken = 0; // the highest number the server says it has taken
let push = null; // setStateValue of the mounted box
let examples = []; // the example buttons' labels
let talk = null; // {run, beats: [{number, say}], sent}: the loaded talk, as the server has it
const clicked = new Map(); // a talk run -> the last beat number this page sent for it

function send(text, beat = null) {
  if (push === null || !text.trim()) {
    return false;
  }
  unconfirmed = unconfirmed.filter((message) => message.id > taken);
  lastId += 1;
  unconfirmed.push(beat === null ? { id: lastId, text } : { id: lastId, text, beat });
  push("sent", unconfirmed.slice());
  return true;
}

// The next beat after the server's count and this page's own clicks, whichever is further.
function sendNextBeat() {
  if (talk === null || !Array.isArray(talk.beats)) {
    return false;
  }
  const next = Math.max(clicked.get(talk.run) || 0, Number(talk.sent) || 0) + 1;
  const beat = talk.beats[next - 1];
  if (!beat || !send(beat.say, beat.number)) {
    return true; // the talk is over: the click is ours, and does nothing
  }
  clicked.set(talk.run, next);
  return true;
}

// Capturing at the document runs before Streamlit's own handler, which then never sees
// the click: the prompt is sent once, by the box.
function onExampleClick(event) {
  const target = event.target instanceof Element ? event.target : null;
  if (target?.closest(".st-key-talk-next button") && push !== null && talk !== null) {
    event.preventDefault();
    event.stopImmediatePropagation();
    sendNextBeat();
    return;
  }
  const button = target?.closest(".st-key-examples button");
  if (!button || push === null) {
    return;
  }
  const label = button.innerText.trim();
  if (!examples.includes(label)) {
    return; // not a prompt we know: leave the click to Streamlit
  }
  event.preventDefault();
  event.stopImmediatePropagation();
  send(label);
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  push = setStateValue;
  taken = Math.max(taken, Number(data?.taken) || 0);
  lastId = Math.max(lastId, taken);
  examples = Array.isArray(data?.examples) ? data.examples : [];
  talk = data?.talk && typeof data.talk === "object" ? data.talk : null;
  document.addEventListener("click", onExampleClick, true); // the same listener is added once
  const cleanup = () => {
    push = null;
    document.removeEventListener("click", onExampleClick, true);
  };

  const box = parentElement.querySelector("textarea");
  const button = parentElement.querySelector(".send");
  if (typeof data?.placeholder === "string") {
    box.placeholder = data.placeholder;
    box.setAttribute("aria-label", data.placeholder);
  }
  // Streamlit calls this function again whenever `data` changes, on the same elements.
  if (box.dataset.wired) {
    return cleanup;
  }
  box.dataset.wired = "1";
  const fit = () => {
    box.style.height = "auto";
    box.style.height = `${box.scrollHeight}px`;
    button.disabled = !box.value.trim();
  };
  const submit = () => {
    if (send(box.value)) {
      box.value = "";
      fit();
    }
  };
  box.addEventListener("input", fit);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  button.addEventListener("click", () => {
    submit();
    box.focus();
  });
  fit();
  return cleanup;
}
