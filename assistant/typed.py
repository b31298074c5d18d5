"""Who a message names in lower case, checked against the names the memories know.

"and lívia's?", "and amani? what's his allergy", "cerys is with me this wk": a name typed
in lower case is a name only when the user's memories mention it (the store's keyword
index, `Known`). Read by the follow-up resolver (assistant/followup.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assistant.lexicon import FUNCTION_WORDS, ROLES, SELF
from assistant.people import words
from assistant.referents import typed_owners

# Which of some names the user's memories mention (the store's keyword index), if known.
Known = Callable[[list[str]], list[str]] | None

# Words typed in lower case that are never a name: grammar, kin and roles, the user.
_NEVER_NAMES = FUNCTION_WORDS | ROLES | SELF


def typed_whose(message: str, earlier: str, known: Known) -> list[str]:
    """Whose, typed in lower case, that the memories know: "and lívia's?" after Julien's.

    Only a possessive that ends the message ("and callum's?"): "and their baby's name?"
    asks about their baby, no one called Baby.
    """
    said = {w.casefold().removesuffix("'s") for w in words(earlier)}
    last = words(message)[-1:]
    owners = [w for w in typed_owners(" ".join(last)) if w not in said]
    return known(owners) if known and owners else []


# "cerys is with me this wk", "tavita wants that for his bday": a sentence opens on who.
_OPENS_ON_WHO = re.compile(
    r"^\W*(?:(?:ok|so|and|but|cool|nice)\W+)*([^\W\d_][\w'’-]*)\s+"
    r"(?:is|was|has|had|wants|wanted|said|says|asked|needs|texted|called|loves|likes)\b"
)


# "what does koro like in his tho?", "where does jayden do his tafe": who a question asks of.
_ASKS_OF_WHO = re.compile(
    r"^\W*(?:(?:ok|so|and|but)\W+)*(?:what|when|where|which|how|why)\s+"
    r"(?:does|did|do|is|was|will|would|can|could|should)\s+([^\W\d_][\w'’-]*)\s+\w"
)


def typed_before(said: str, known: Known) -> str:
    """Who the message types in lower case before its pronoun, that the memories know.

    "but bramble's been limping on her back leg" is Bramble's leg, not the cat the last
    exchange named, "cerys is with me this wk, anything she cant have" asks about Cerys,
    and "what does koro like in his tho?" after a boil-up recipe asks what koro likes.
    """
    opener = _OPENS_ON_WHO.match(said) or _ASKS_OF_WHO.match(said)
    typed = [*typed_owners(said), *([opener.group(1)] if opener else [])]
    typed = [w for w in typed if w.islower() and w not in _NEVER_NAMES]
    return next(iter(known(typed)), "") if known and typed else ""


_LED = re.compile(
    r"^\W*(?:(?:ok|okay|so)\W+)?(?:and|what about|how about)\s+([^\W\d_][\w'’-]*)\s*[?,:]"
)


def led_by(message: str, asked: str, known: Known) -> str:
    """Who an "and …?" names first, typed in lower case: "and amani? what's his allergy".

    Only a word the earlier question did not say and the memories mention: "and amani?"
    after Zawadi's allergy asks Amani's, and "his" is Amani.
    """
    led = _LED.match(message)
    word = led.group(1) if led else ""
    said = {w.casefold() for w in words(asked)}
    if not word.islower() or word in said or word in _NEVER_NAMES:
        return ""
    return word if known and known([word]) else ""
