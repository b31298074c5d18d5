"""Clock times in a fact, said again beside them: "16:40 (4:40 pm)", "9.40am (time: 9:40 am)".

The 1.5B model turned "16:40" into "2:40 PM" and "we go on 22:15" into "8:15": it reads
the hour, then gets the afternoon wrong. And in "tues 11 feb 9:15am" it took the day for
the hour ("11:15 AM"), as "Fr 22. nov 08:15" became "2:15 PM". The fact the user saved
stays as it is; only the copy the model is given says the time again, where its 12-hour
reading is sure: an am or pm, an hour past 12, or an hour with a leading zero. "10:30"
alone may be either, and is left as it is.
"""

from __future__ import annotations

import re

_CLOCK = re.compile(
    r"(?<![\w:.,/£$€])(?:"
    # "9.40am", "7pm", "10:30 a.m.": said with its half of the day.
    r"(?P<hour>1[0-2]|0?[1-9])(?:[:.](?P<minute>[0-5]\d))?\s?(?P<half>[ap])(?:m\b|\.m\.)"
    # "08:15", "06h00": a morning hour. Not "07.05": a dot there may be a date.
    r"|0(?P<morning>\d)[:h](?P<morning_minute>[0-5]\d)(?![\d:]|\s?[ap]\.?m\b)"
    # "16:40", "15h", "15h30". Not "22.15" (money, with a dot), nor one with am or pm.
    r"|(?P<late>1[3-9]|2[0-3])(?:[:h](?P<late_minute>[0-5]\d)|h(?![a-z]))(?![\d:]|\s?[ap]m\b)"
    r")",
    re.IGNORECASE,
)


def _said(hour: int, minute: str | None, half: str) -> str:
    return f"{hour}:{minute} {half}" if minute and minute != "00" else f"{hour} {half}"


def _again(match: re.Match[str]) -> str:
    if match["late"]:
        # The form the 24-hour fix was measured with (docs/followups.md).
        return f"{match[0]} ({_said(int(match['late']) - 12, match['late_minute'], 'pm')})"
    # Minutes always, as measured: "7pm (time: 7:00 pm)".
    if match["morning"]:
        said = f"{int(match['morning'])}:{match['morning_minute']} am"
    else:
        said = f"{int(match['hour'])}:{match['minute'] or '00'} {match['half'].casefold()}m"
    return f"{match[0]} (time: {said})"


def with_clock_times(text: str) -> str:
    """The text with each clock time whose 12-hour reading is sure said again beside it."""
    return _CLOCK.sub(_again, text)
