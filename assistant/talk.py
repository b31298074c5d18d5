"""A talk: a fixed story told live, one beat a line, and its rehearsal without a browser.

A talk file is JSON Lines, one beat a line:

    {"say": "What's 2+2?", "expect": "skip", "note": "General knowledge: no search."}

- `say` (required): the message, sent as if typed;
- `expect`: "retrieve" or "skip", the decision the slides promise;
- `note`: what the presenter tells the room at that beat;
- `compare`: true to answer the beat beside its always-retrieve twin (compare mode).

Blank lines are skipped. Anything else is an error that names the file and the line: a
misspelt field must not let a rehearsal pass. A surprise on stage is the failure a talk
exists to avoid, so `rehearse` plays the beats through the app's own chat (the same gate
chain and pipeline, capture off) and says which beats would surprise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory.jsonl import JsonlError, read_jsonl

if TYPE_CHECKING:
    from assistant.turn.chat import Chat, Exchange

EXPECTS = ("retrieve", "skip")
FIELDS = ("say", "expect", "note", "compare")
DEFAULT_TALK = Path(__file__).resolve().parent / "data" / "default_talk.jsonl"


class TalkError(ValueError):
    """A talk file that cannot be played: which file, which line, what is wrong."""


@dataclass(frozen=True)
class Beat:
    """One beat of a talk: a message, the decision it should get, the presenter's note."""

    number: int
    line: int
    say: str
    expect: str | None = None
    note: str = ""
    compare: bool = False


def _beat(row: dict, number: int, line: int) -> Beat:
    """One line's beat; TalkError says what is wrong with it."""
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise TalkError(f"line {line}: unknown field {unknown[0]!r} (fields: {', '.join(FIELDS)})")
    say = row.get("say")
    if not isinstance(say, str) or not say.strip():
        raise TalkError(f'line {line}: "say" is required: the message, as text')
    expect = row.get("expect")
    if expect is not None and expect not in EXPECTS:
        raise TalkError(f'line {line}: "expect" is "retrieve" or "skip", not {expect!r}')
    note = row.get("note", "")
    if not isinstance(note, str):
        raise TalkError(f'line {line}: "note" is text')
    compare = row.get("compare", False)
    if not isinstance(compare, bool):
        raise TalkError(f'line {line}: "compare" is true or false')
    return Beat(number, line, say.strip(), expect, note.strip(), compare)


def read_talk(path: Path) -> tuple[Beat, ...]:
    """The beats of a talk file, in order; TalkError names the file and the line at fault."""
    beats: list[Beat] = []
    try:
        for line, row in read_jsonl(path):
            try:
                beats.append(_beat(row, len(beats) + 1, line))
            except TalkError as exc:
                raise TalkError(f"{path}, {exc}") from None
    except JsonlError as exc:
        raise TalkError(str(exc)) from None
    except OSError as exc:
        raise TalkError(f"{path}: cannot read it ({exc.__class__.__name__}: {exc})") from None
    if not beats:
        raise TalkError(f'{path}: no beats (one JSON object a line, each with a "say")')
    return tuple(beats)


def decided(exchange: Exchange) -> str:
    """ "retrieve" (failing open included) or "skip": what a beat's `expect` is held to."""
    return "retrieve" if exchange.gated.decision.retrieve else "skip"


@dataclass
class TalkPlay:
    """A talk loaded in the app: its beats, and how many the presenter has sent."""

    beats: tuple[Beat, ...]
    name: str  # the file's name, as the page shows it
    sent: int = 0
    run: int = 0  # counts restarts: the chat box starts counting Next clicks again

    @property
    def upcoming(self) -> Beat | None:
        """The beat the Next button sends, or None when the talk is over."""
        return self.beats[self.sent] if self.sent < len(self.beats) else None

    def take(self) -> Beat | None:
        """The next beat, counted as sent."""
        beat = self.upcoming
        if beat is not None:
            self.sent += 1
        return beat

    def reached(self, number: int) -> None:
        """Beats up to `number` were sent (by the chat box, which counts clicks itself)."""
        self.sent = min(len(self.beats), max(self.sent, number))

    def restart(self) -> None:
        """Back to the first beat (the chat is cleared separately); a new run of the talk."""
        self.sent = 0
        self.run += 1

    def beat(self, number: int | None) -> Beat | None:
        """The beat with that number, if this talk has it."""
        if number is None or not 1 <= number <= len(self.beats):
            return None
        return self.beats[number - 1]

    def surprise(self, exchange: Exchange) -> str:
        """ "the talk expected skip" when the exchange's beat promised the other decision."""
        beat = self.beat(exchange.beat)
        if beat is None or beat.expect is None or beat.expect == decided(exchange):
            return ""
        return f"the talk expected {beat.expect}"


def load_talk(path: Path | None = None) -> TalkPlay:
    """A talk file (the default talk without one) ready to play; TalkError if malformed."""
    path = path or DEFAULT_TALK
    name = "the default talk" if path == DEFAULT_TALK else path.name
    return TalkPlay(read_talk(path), name)


@dataclass(frozen=True)
class Rehearsed:
    """What one beat got in a rehearsal: the whole exchange, for the line and the scoreboard."""

    beat: Beat
    exchange: Exchange

    @property
    def decision(self) -> str:
        """ "retrieve" (failing open included) or "skip"."""
        return decided(self.exchange)

    @property
    def surprise(self) -> bool:
        """True when the beat promised a decision and got the other one."""
        return self.beat.expect is not None and self.beat.expect != self.decision


def rehearse(
    chat: Chat,
    beats: Sequence[Beat],
    gate_mode: str | None = None,
    on_beat: Callable[[Rehearsed], None] | None = None,
) -> list[Rehearsed]:
    """Play the beats in order as one conversation, as the app would; capture stays off."""
    from assistant.turn.chat import TurnOptions

    history: list[Exchange] = []
    out: list[Rehearsed] = []
    for beat in beats:
        options = TurnOptions(gate_mode=gate_mode, capture=False, compare=beat.compare)
        exchange = chat.answer(beat.say, history, options)
        history.append(exchange)
        played = Rehearsed(beat, exchange)
        out.append(played)
        if on_beat is not None:
            on_beat(played)
    return out


def beat_line(played: Rehearsed, total: int) -> str:
    """One line of a rehearsal: decision, expected, query, gate ms, first-token ms."""
    beat, turn = played.beat, played.exchange.gated
    mark = "SURPRISE" if played.surprise else ("ok" if beat.expect else "-")
    first_ms = turn.timings.first_token_ms
    first = "-" if first_ms is None else f"{first_ms:,.0f} ms"
    query = f' query "{turn.decision.query}"' if turn.decision.retrieve else ""
    return (
        f"{beat.number}/{total} {mark:<8} {played.decision:<8} expected {beat.expect or '-':<8} "
        f"gate {turn.timings.gate_ms:,.1f} ms · first token {first} · {beat.say!r}{query}"
    )


def check(argv: list[str]) -> int:
    """`memory-gate talk check FILE`: 0 when every beat got what it expects, 1 if not, 2 on
    a file that cannot be played (nothing is played then)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="memory-gate talk check",
        description="Rehearse a talk without a browser: play its beats through the app's "
        "chat, gate chain and pipeline, on the app's settings, with capture off.",
    )
    parser.add_argument("file", type=Path, nargs="?", default=DEFAULT_TALK)
    parser.add_argument("--gate", help="the gate mode (default: the app's)")
    args = parser.parse_args(argv)
    try:
        beats = read_talk(args.file)
    except TalkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from assistant.turn.factory import build_assistant

    assistant = build_assistant()
    try:
        assistant.wait_for_model(timeout=300)
        played = rehearse(
            assistant.chat,
            beats,
            args.gate,
            on_beat=lambda p: print(beat_line(p, len(beats)), flush=True),
        )
    finally:
        assistant.close()
    from dataclasses import asdict

    from assistant.page.export import scoreboard_lines
    from assistant.page.session import scoreboard

    # The figures a presenter quotes: the same scoreboard the stage shows, estimates said so.
    exchanges = [p.exchange for p in played]
    print("\n".join(scoreboard_lines(asdict(scoreboard(exchanges)))))
    surprises = [p.beat for p in played if p.surprise]
    if surprises:
        named = ", ".join(f"{b.number} (line {b.line}, expected {b.expect})" for b in surprises)
        print(f"{len(surprises)} of {len(beats)} beats would surprise: {named}")
        return 1
    expected = sum(1 for b in beats if b.expect)
    print(f"all {expected} beats with an expect got it ({len(beats)} beats)")
    return 0
