"""Whether a reply gives a gold answer: the rule of "Correct" in answer_score.py's docstring.

Both sides are read the same way, so a reading rule can only add matches: a clock's am/pm
and a unit stand apart from their number, "3:45" and "3.45" are one time, a plural is its
word, a weekday or month its first three letters, an ordinal its number, and a month
before its day is the day before its month ("September 30th" holds "30 Sept").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from assistant.eval.answer_score import holds_run, normalise, tokens

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")

_SAME = re.compile(
    r"\b(?:((?:mon|tues|wednes|thurs|fri|satur|sun)day)s|(\d+)(?:st|nd|rd|th))\b", re.I
)


# "230V" holds 230: a unit written onto its number stands apart, as a clock's pm does.
_UNIT = re.compile(r"(?<=\d)(?=(?:k?v|k?w|kwh|km|kg|mg|ml|cm|mm|mph|kph|[glmcf])\b)", re.I)


def _singular(token: str) -> str:
    """A word's plural is the word: "walnuts" holds "walnut" (not "glass", "Paris")."""
    plural = len(token) >= 5 and token.isalpha() and token.endswith("s")
    return token[:-1] if plural and not token.endswith(("ss", "us", "is")) else token


# A clock's minutes after a colon or a dot are one time: "3:45 PM" holds "3.45pm".
_CLOCK_COLON = re.compile(r"\b(\d{1,2}):(\d{2})(?!\d)")
# A weekday or a month is its first three letters: "Tuesdays" holds "Tue", "Sept" is "Sep".
_SHORT = {
    **{w: w[:3] for w in "monday tuesday wednesday thursday friday saturday sunday".split()},
    **{w: w[:3] for w in "january february march april june july august september".split()},
    **{w: w[:3] for w in "october november december".split()},
    **{"tues": "tue", "thur": "thu", "thurs": "thu", "sept": "sep"},
}


_MONTHS = frozenset("jan feb mar apr may jun jul aug sep oct nov dec".split())


def answer_tokens(text: str) -> list[str]:
    """The tokens an answer is matched on: "Tuesdays" holds Tuesday, "May 12th" May 12."""
    text = _CLOCK_COLON.sub(r"\1.\2", _UNIT.sub(" ", _SAME.sub(_same, text)))
    return _day_first([_SHORT.get(t, t) for t in map(_singular, tokens(text))])


def _day(word: str) -> bool:
    return word.isdigit() and 1 <= int(word) <= 31


def _day_first(words: list[str]) -> list[str]:
    """A month before its day, the day first: "September 30th" holds "30 Sept".

    Not a month that already has its day ("17 Jul 8am"), nor before a clock ("Jul 8am").
    """
    out, i = list(words), 0
    while i < len(out) - 1:
        dated = i > 0 and _day(out[i - 1])
        clock = out[i + 2 : i + 3] in (["am"], ["pm"])
        if out[i] in _MONTHS and _day(out[i + 1]) and not dated and not clock:
            day = out[i + 1]
            out[i], out[i + 1] = day, out[i]
            i += 1
        i += 1
    return out


def _same(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2)


# "8:00 PM" is 8pm: a whole hour written with its minutes, before its am/pm.
_WHOLE_HOUR = re.compile(r"\b(\d{1,2}):00\s*(?=[ap]\.?m\b)", re.IGNORECASE)


_Readings = tuple[list[str], list[str] | None]


def _readings(text: str) -> _Readings:
    """A text's tokens, and its tokens with a whole hour's ":00" dropped, if it has one."""
    hour = _WHOLE_HOUR.sub(r"\1 ", text)
    return answer_tokens(text), (answer_tokens(hour) if hour != text else None)


def _holds(reply: _Readings, answer: _Readings) -> bool:
    if holds_run(reply[0], answer[0]):
        return True
    if reply[1] is None and answer[1] is None:
        return False
    hour_reply = reply[0] if reply[1] is None else reply[1]
    hour_answer = answer[0] if answer[1] is None else answer[1]
    return holds_run(hour_reply, hour_answer)


def contains(reply: str, answer: str) -> bool:
    """True when the answer's tokens appear, in order and adjacent, among the reply's."""
    return _holds(_readings(reply), _readings(answer))


def last_number(reply: str) -> float | None:
    """The last number the reply writes (thousands separators ignored), or None."""
    found = _NUMBER.findall(normalise(reply))
    return float(found[-1]) if found else None


def is_correct(reply: str, answers: Iterable[str], match: str = "contains") -> bool:
    """Whether the reply gives one of the gold answers, by the question's match rule."""
    answers = [str(a) for a in answers]
    if match == "last_number":
        value = last_number(reply)
        golds = [last_number(a) for a in answers]
        return value is not None and any(g is not None and abs(g - value) < 1e-9 for g in golds)
    if match != "contains":
        raise ValueError(f"unknown match rule {match!r}")
    said = _readings(reply)  # read once, matched against each answer
    return any(_holds(said, _readings(a)) for a in answers)
