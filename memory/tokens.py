"""The words the keyword index sees: lower-case tokens, stopwords dropped, lightly stemmed."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Function words carry no topic; dropping them keeps postings short and scores sharp.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn aren weren won wouldn shouldn couldn hasn haven
    hadn im ive id youre thats whats hey oh yeah yes wow really also get got like know think
    one thing things much lot well just so""".split()
)

_TOKEN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light English suffix stripper: enough to match plurals and -ing/-ed forms."""
    # Why not Porter: on short chat memories its aggressive rules merge unrelated words
    # ("university"/"universe"); plurals and verb endings give most of the gain.
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        # "studies" and "studied" -> "study", as "study" and "studying" already are.
        return word[:-3] + "y"
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            # "running" -> "runn" -> "run": undo the doubled consonant the suffix left.
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    return word


# Chat shorthand, as people type their notes ("liams bday is 9 august"): the word it stands
# for, so "When's Liam's birthday?" finds it by keyword.
SHORTHAND = {
    "bday": "birthday", "bdays": "birthday", "appt": "appointment", "appts": "appointment",
    "mtg": "meeting", "mtgs": "meeting", "tmrw": "tomorrow", "tmr": "tomorrow",
    "yr": "year", "yrs": "year", "wk": "week", "wks": "week", "hrs": "hour",
    "mins": "minute", "tues": "tuesday", "weds": "wednesday", "thurs": "thursday",
    "bro": "brother", "sis": "sister", "gf": "girlfriend", "bf": "boyfriend",
    "uni": "university", "dept": "department", "veg": "vegetables", "veggies": "vegetables",
    "hubby": "husband", "mgr": "manager", "msg": "message",
}  # fmt: skip


# Letters that Unicode does not split into a letter and an accent: "Łukasz" is "lukasz".
_UNSPLIT = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ı": "i", "ß": "ss", "æ": "ae", "œ": "oe"})


def unaccented(text: str) -> str:
    """Lower case without accents: "Montréal" is "montreal", as a note types it.

    Else an accented letter split the word ("montr", "al"), and "montreal" never met it.
    """
    decomposed = unicodedata.normalize("NFKD", text.lower().translate(_UNSPLIT))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens without stopwords or accents, shorthand spelt out, stemmed."""
    words = _TOKEN.findall(unaccented(text))
    return [stem(SHORTHAND.get(t, t)) for t in words if t not in STOPWORDS]
