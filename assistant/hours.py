"""24-hour times in a fact, read the 12-hour way beside them: "16:40" is "16:40 (4:40 pm)".

The 1.5B model turned "16:40" into "2:40 PM" and "we go on 22:15" into "8:15": it reads
the hour, then gets the afternoon wrong. The fact the user saved stays as it is; only
the copy the model is given says both.
"""

from __future__ import annotations

import re

# "16:40", "22.15" (only with "h" or a colon is "22.15" surely a time; a dot can be money),
# "15h", "15h30", "19h00". Not "16:40 (4:40 pm)" again, nor a time already with am or pm.
_TWENTY_FOUR = re.compile(
    r"(?<![\d:.,/])(?P<hour>1[3-9]|2[0-3])(?:[:h](?P<minute>[0-5]\d)|h(?![a-z]))"
    r"(?![\d:]|\s?(?:am|pm)\b)",
    re.IGNORECASE,
)


def _twelve(match: re.Match[str]) -> str:
    hour = int(match["hour"]) - 12
    minute = match["minute"]
    said = f"{hour}:{minute} pm" if minute and minute != "00" else f"{hour} pm"
    return f"{match[0]} ({said})"


def with_twelve_hour(text: str) -> str:
    """The text with each afternoon or evening 24-hour time also given as am/pm."""
    return _TWENTY_FOUR.sub(_twelve, text)
