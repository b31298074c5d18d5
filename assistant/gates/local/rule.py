"""The explicit-reference rule: a plain reference to earlier chats or the user's facts.

An explicit reference always retrieves, whatever the classifier says. `EARLIER_CHAT` is
also one of the classifier's features (cues.py), so the rule and the feature agree.
"""

from __future__ import annotations

import re

from assistant.gates.local.text import carries_material

# The one pattern for a reference to earlier chats: what the user told the assistant, or
# the assistant told the user. It is both a feature and, through explicit_memory_reference,
# the rule; past tenses only, so "can you tell me a joke" is not a reference.
_YOU = r"(?:you|u|ya)"  # people type "did u say" as often as "did you say"
_ONCE = r"(?:once |already |previously |earlier |just )?"  # "I once told you", "you already said"
_MADE = (
    r"wrote|drafted|made|listed|laid out|put together|came up with|worked out|sketched"
    r"|planned|calculated|suggested|recommended"
)
EARLIER_CHAT = re.compile(
    rf"\b(?:do|did|can|could) {_YOU} (?:still )?(?:remember|recall)\b"
    r"|\bremind me (?:what|which|who|when|where|how|of|about|again)\b"
    rf"|\b(?:i|we) {_ONCE}(?:told|mentioned|said|talked about|discussed|chatted about)\b"
    rf"|\b(?:i|we) {_ONCE}(?:showed|gave|sent|asked) {_YOU}\b"
    rf"|\b(?:i|we) {_ONCE}shared (?:[\w'\"“”:-]+ ){{0,8}}with {_YOU}\b"
    r"|\b(?:did|have) i (?:ever )?(?:tell|told|mention|say|share)\b"
    rf"|\b{_YOU}(?:'ve| have)? {_ONCE}(?:recommended|suggested|told me|mentioned|said|gave me|"
    r"showed me|taught me|advised|proposed)\b"
    rf"|\b{_YOU}(?:'ve| have) (?:ever )?{_ONCE}(?:given|told|shown|taught|sent) me\b"
    rf"|\bhave {_YOU} (?:ever )?{_ONCE}(?:given|told|shown|taught|sent) me\b"
    rf"|\bdid {_YOU} (?:recommend|suggest|tell me|mention|say|give me|show me|advise)\b"
    # Something the assistant made for the user earlier: "you wrote me", "the pros and
    # cons you laid out", "those names you came up with".
    rf"|\b{_YOU}(?:'ve| have)? {_ONCE}(?:{_MADE}) (?:for )?me\b"
    rf"|\b{_YOU}(?:'ve| have)? {_ONCE}walked me through\b"
    rf"|\b(?:the|that|those|this) (?:[\w'-]+ ){{1,4}}{_YOU} {_ONCE}(?:{_MADE}|gave me)\b"
    r"|\b(?:recommended|suggested) (?:to )?me\b"
    rf"|\blast time (?:we|i|{_YOU})\b",
    re.IGNORECASE,
)
# The user's own tastes, habits and past: "do I like", "where did I go", "what was the
# cafe I liked". Part of the rule; `_MY_TASTE` in cues.py is the broader feature.
_OWN_PAST = re.compile(
    r"\bdo i (?:like|love|enjoy|prefer|usually|normally|always)\b"
    r"|\b(?:what|which|where|when|who|how) did i\b"
    r"|\bwhat (?:was|were) (?:the|that|those) (?:[\w']+ ){1,5}(?:that )?i\b",
    re.IGNORECASE,
)
# The name of someone or something of the user's, to be used: "make it for my best friend,
# put her name in", "now one for my team, with the club name in it". Read alone, "make it"
# is a task that needs nothing (the classifier: p=0.00), and the poem got no name.
_NAME_OF_MINE = re.compile(r"\bmy\b.*\b(?:his|her|their|its|by|the [\w-]+) name\b", re.IGNORECASE)
# "What's my ..." asks for a stored fact, unless the message carries its own context:
# the numbers ("I'm 170 cm and 68 kg, what's my BMI?") or a description of the user's
# situation before the question ("I'm allergic to cats, what are my options?").
_ASKS_MY = re.compile(r"\bwhat(?:'s|’s|s| is| was| are| were) my\b", re.IGNORECASE)
_SETS_CONTEXT = re.compile(
    r"\bi(?:'m|’m| am| have| had| live| work| want| need|'ve| got)\b", re.IGNORECASE
)


def explicit_memory_reference(text: str) -> bool:
    """True when `text` (a gate_text) plainly asks about earlier chats or the user's facts.

    An explicit reference always retrieves, whatever the classifier says: it is the
    clearest memory signal there is, and a false alarm costs one ~10 ms search. Not when
    the message carries its own material: "what did I do wrong here: <code>" is answered
    from the message. A quoted title ('the "Night Circus" book you suggested') is a
    reference, not material.
    """
    if carries_material(text):
        return False
    if EARLIER_CHAT.search(text) or _OWN_PAST.search(text) or _NAME_OF_MINE.search(text):
        return True
    asks = _ASKS_MY.search(text)
    if asks is None or re.search(r"\d", text):
        return False
    return not _SETS_CONTEXT.search(text[: asks.start()])
