"""Sending a message under AppTest as the chat box does: its state, set through its key.

AppTest cannot type into a custom component, but it can set the component's value, and
the app reads that value the same way whether a browser or this helper set it.
"""

from __future__ import annotations

from typing import Any

from assistant.page.inbox import CHAT_BOX_KEY


def send_message(at: Any, message: str) -> Any:
    """Type `message` into the chat box, press Enter, and run the app (returns `at`).

    The state is what assistant/page/ui/chat_box.js sends: every message the inbox has not
    taken yet, the new one last, numbered one above the highest number so far.
    """
    state = at.session_state.get(CHAT_BOX_KEY, {})
    inbox = at.session_state.get("inbox")
    taken = inbox.taken if inbox is not None else 0
    pending = [m for m in state.get("sent") or [] if m["id"] > taken]
    last = max([taken, *(m["id"] for m in pending)])
    at.session_state[CHAT_BOX_KEY] = {"sent": [*pending, {"id": last + 1, "text": message}]}
    return at.run()
