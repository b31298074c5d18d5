"""What the user says they do not mean: "the GP appt, not the dentist one".

Baits name the fact they mean by the one they do not. What is ruled out is neither
searched for (`without_ruled_out`), nor sent (assistant/answered.py), nor whom a "he"
points at (assistant/referents.py). Word rules only, no model call.
"""

from __future__ import annotations

import re

from assistant.asked import ASKED_TERMS
from memory.tokens import tokenize

_WORD = r"[^\W\d_][\w-]*"
_DETERMINER = r"(?:the|my|our|that|mr|mrs|ms|dr)\.?\s+"
# "not the dentist one", "dylan's birthday not cerys's", "no kirsty's, my sister's", "not
# léa's dentist", and a bare word where the clause ends after it: "not kito, i mean the
# tiger", "the work trip, not oaxaca", "sam, not marc - the guy on the pumper". "is it not
# Tuesday?" asks.
_NOT_THE = re.compile(
    rf"\bnot\s+{_DETERMINER}({_WORD})"
    rf"|\b(?:not|no)\s+({_WORD})['’]s\b(?:\s+({_WORD}))?"
    rf"|\bnot\s+({_WORD})(?=\s*(?:[,.;:)–—-]|$|i mean\b|but\b))",
    re.IGNORECASE,
)
# "forget Akosua's school for now, its Kofi's teacher", "ok forget Tokyo for a sec, the
# Luzern trip": set aside for the moment, as "not" sets it aside.
_FORGET = re.compile(
    rf"\bforget\s+(?:about\s+)?(?:{_DETERMINER})?({_WORD})(?:['’]s)?(?:\s+({_WORD}))??"
    r"\s+for\s+(?:now|a\s+(?:sec|second|minute|moment|bit))\b",
    re.IGNORECASE,
)
# "suresh picked the dell over the thinkpad", "went with the blue one instead of the red",
# "the 6am train rather than the 8": what was passed over is ruled out as "not" rules it
# out. "over" only after a choice: "coming over", "going over the drawings" pass nothing over.
_OVER = re.compile(
    rf"\b(?:(?:picked|pick|chose|choose|chosen|prefer|preferred|opted|took|decided|"
    rf"(?:went|going|go)\s+(?:with|for))\b[^,.;:!?]*?\bover|instead\s+of|rather\s+than)\s+"
    rf"(?:{_DETERMINER})?({_WORD})",
    re.IGNORECASE,
)
# After "not trace's birthday", another's bare "me mam's" or "lu's" means her birthday, and
# so do "i mean lukas's mum's" and "thinkin bout jess's" (after "forget mama's bday for now"),
# wherever in the sentence it stands. Not "lily's party": that names a thing of its own.
_BARE_WHOSE = re.compile(rf"\b{_WORD}['’]s\b(?!\s+{_WORD})(?=\W*$|\W*[,;.!?])")
# The same said anywhere in a query, "one" and all, to take it out.
_NOT_SAID = re.compile(
    rf"\b(?:not|no)\s+(?:{_DETERMINER})?({_WORD})"
    rf"(?:['’]s(?:\s+({_WORD}))?)?(?:\s+one)?\b",
    re.IGNORECASE,
)
_MARKS = re.compile(r"\s*([,;:–—-])(?:\s*[,.;:–—-])+")
# "not the same", "not the best time", "not sure,", "not yet.": no fact's word.
_NOT_A_FACT = frozenset(
    tokenize(
        "best worst first last usual other right wrong whole real end point case only sure "
        "yet really today tonight anymore again always quite exactly necessarily bad good "
        "great ok okay fine enough either sorry true bothered fussed worried one"
    )
)


def ruled_out(*texts: str) -> set[str]:
    """The words of what the user said they do not mean: "not the dentist one": dentist.

    "not léa's dentist" rules out the dentist too, unless the text speaks of one elsewhere
    ("léa's birthday, not thomas's birthday" rules out Thomas, not birthdays).
    """
    out: set[str] = set()
    for text in texts:
        for said in _NOT_THE.finditer(text):
            out.update(tokenize(said[1] or said[2] or said[4]))
            if not _BARE_WHOSE.search(text[said.end() :]):
                out.update(_thing_set_aside(text, said, said[3]))
        for said in _OVER.finditer(text):
            out.update(_thing_set_aside(text, said, said[1]))
        for said in _FORGET.finditer(text):
            out.update(tokenize(said[1]))
            if not _BARE_WHOSE.search(text[said.end() :]):
                out.update(_thing_set_aside(text, said, said[2]))
    return out - ASKED_TERMS - _NOT_A_FACT


def _thing_set_aside(text: str, said: re.Match[str], thing: str | None) -> set[str]:
    """The words of the thing set aside, unless the text speaks of it elsewhere too."""
    rest = set(tokenize(text[: said.start()] + " " + text[said.end() :]))
    return set(tokenize(thing or "")) - rest


def _forgot(said: re.Match[str], ruled: set[str]) -> str:
    """A "forget X's Y for now" cut from a query: Y stays when another's Y is meant."""
    if not ruled & set(tokenize(said[1])):
        return said[0]
    return said[2] if said[2] and not ruled & set(tokenize(said[2])) else ""


def without_ruled_out(query: str, ruled: set[str]) -> str:
    """The query without what the user said they do not mean: it is no thing to search for.

    "not kito, i mean the tiger", searched as it is, found Kito the lion and nothing of the
    tiger; "i mean the tiger" finds him.
    """
    if not ruled:
        return query

    def cut(said: re.Match[str]) -> str:
        if not ruled & set(tokenize(said[1])):
            return said[0]
        if said[2] and not ruled & set(tokenize(said[2])):
            return said[0][said.start(2) - said.start(0) - 1 :]  # "not mama's" of an address
        return ""

    kept = _NOT_SAID.sub(cut, query)
    kept = _FORGET.sub(lambda said: _forgot(said, ruled), kept)
    # "sam, not marc - the guy": one mark is left where two met, "sam, the guy".
    kept = _MARKS.sub(lambda m: f" {m[1]}" if m[1] in "–—-" else m[1], kept)
    kept = " ".join(kept.replace(" ,", ",").split()).strip(" ,.;:–—-")
    return kept or query
