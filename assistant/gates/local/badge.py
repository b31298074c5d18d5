"""The local gate's reason for the badge, in words, from the cues the classifier read."""

from __future__ import annotations

import numpy as np

from assistant.gates.local.cues import FEATURE_NAMES


def reason(cues: np.ndarray, retrieve: bool, p: float, explicit: bool, by_rule: bool) -> str:
    """A short, honest label from the same cues the classifier read, and the probability.

    `explicit` says the explicit-reference rule matched; `by_rule` that the rule made a
    retrieve against the classifier, so the badge does not pretend the probability did.
    """
    f = dict(zip(FEATURE_NAMES, cues, strict=True))
    if by_rule:
        return f"about past chats or your facts (rule), p={p:.2f}"
    if retrieve:
        if explicit:
            cue = "about past chats or your facts"
        elif f["earlier_chat"]:
            cue = "refers to past chats"
        elif f["bare_first_name"] or f["name_possessive"]:
            cue = "about someone you know"
        elif f["relation_words"] and (f["possessive_my_our"] or f["first_singular"]):
            cue = "about your people"
        elif f["recommend_cue"]:
            cue = "needs your preferences"
        elif f["time_words"] or f["event_words"]:
            cue = "your plans or events"
        elif f["first_singular"] or f["first_plural"]:
            cue = "personal reference"
        else:
            cue = "may need memory"
    elif f["greeting_only"]:
        cue = "small talk"
    elif f["code_cue"] >= 2 or f["pasted_text"]:
        cue = "self-contained task"
    elif f["math_cue"] or f["numbers"] >= 1.5:
        cue = "math, no memory needed"
    elif f["task_verb_start"]:
        cue = "self-contained task"
    else:
        cue = "general question"
    return f"{cue}, p={p:.2f}"
