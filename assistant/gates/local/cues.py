"""The cheap text cues the local gate reads beside the embedding, each defined once.

Word lists are deliberately generic (not tuned to any evaluation set): they name the
kinds of words that point at the user's own life, or at a self-contained question.
Everything here reads `gate_text(message)` (text.py), the same text the classifier embeds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from assistant.gates.local.rule import EARLIER_CHAT
from assistant.gates.local.text import CODE

_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_FIRST_SINGULAR = {"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll", "im"}
_FIRST_PLURAL = {"we", "us", "our", "ours", "we're", "we've", "we'd", "we'll", "let's"}
_SECOND = {"you", "your", "yours", "you're", "you've", "u"}
_POSSESSIVE = {"my", "our"}
# Words that are also ordinary words are left out: "am" (I am), "sat", "wed", "sun",
# "march" (the verb). Clock times and dates are counted by _DATE instead.
_TIME = set(
    "today tonight tomorrow yesterday morning afternoon evening weekend week month year "
    "monday tuesday wednesday thursday friday saturday sunday "
    "january february april june july august september october november december "
    "next last later soon ago upcoming o'clock noon midnight schedule calendar "
    "deadline due".split()
)
_RELATION = set(
    "mom mum mother dad father mommy daddy parents parent brother sister sibling siblings "
    "son daughter kid kids children child baby wife husband partner spouse girlfriend "
    "boyfriend fiance fiancé fiancée grandma grandpa grandmother grandfather grandparents "
    "aunt uncle cousin niece nephew in-laws in-law stepmom stepdad boss manager coworker "
    "colleague colleagues team roommate flatmate neighbour neighbor friend friends bestie "
    "mentor therapist doctor dentist landlord babysitter nanny teacher coach family".split()
)
_EVENT = set(
    "appointment meeting flight dentist doctor checkup party wedding birthday anniversary "
    "reservation booking interview dinner lunch brunch trip vacation holiday concert "
    "class lesson shift call standup review recital game match haircut surgery vet "
    "lease rent bill payment plans plan visit reunion offsite conference exam "
    "password address order pickup".split()
)
_RECOMMEND = re.compile(
    r"\b(recommend|suggest|suggestions?|ideas? for|should (?:i|we)|what should|plan (?:my|"
    r"our|a|the)|help me (?:plan|choose|pick|decide)|pick (?:a|me)|find me|for me\b|i'd like|"
    r"i would like|would i (?:like|enjoy)|good (?:place|spot|restaurant)s?)",
    re.IGNORECASE,
)
_GREETING = set(
    "hi hello hey hiya yo thanks thank thx ty bye goodbye goodnight morning lol lmao haha "
    "hahaha ok okay cool nice great awesome sure yep yeah nope no yes wow hmm ugh oh "
    "welcome congrats cheers".split()
)
_TASK_VERBS = set(
    "write compose draft generate create make list explain describe summarize summarise "
    "translate rewrite paraphrase classify categorize categorise convert sort extract "
    "identify give name outline design invent brainstorm fix proofread correct edit check "
    "shorten format rate tag count find detect solve compute calculate evaluate simplify "
    "expand define compare tell".split()
)
_WH = {"who", "what", "when", "where", "which", "why", "how", "whose", "whom"}
_MATH = re.compile(r"\d\s*[-+*/^x×÷=%]\s*\d|\b(sqrt|log|integral|derivative|factorial)\b")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# Dates and clock times point at events in someone's life, quantities at arithmetic:
# they are counted apart, so "On May 2nd, which film did I see?" is not a word problem.
_DATE = re.compile(
    r"\b(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}"
    r"(?:st|nd|rd|th)?\b|\d{1,2}(?:st|nd|rd|th)\b|\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|"
    r"\d{1,2}:\d{2}\b|\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|(?:19|20)\d{2}-\d{2}-\d{2}\b)",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"[\"“][^\"”]{12,}[\"”]")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"“(\n]\s*)([A-Z][\w'’]*)")
_CAPITALISED = re.compile(r"[A-Za-z][\w'’.-]*")

# Common given names: a name used alone ("Priya's daughter", "did Tom call") points at
# someone the user knows; famous people are named in full or by surname ("Einstein").
# Names that are also ordinary words, places or common surnames (May, Will, Grace, Mark,
# Jordan, Georgia, Austin, Kim, Chen...) are left out.
_FIRST_NAMES = set(
    """
    aaron abby adam adrian ahmed aidan aisha alan albert alex alexa alexander alexis
    alice alicia alison amanda amber amelia amir amy ana andrea andy angela anna anne annie
    anthony antonio arjun arthur ashley ava barbara becky ben benjamin beth bianca
    brandon brenda brian bridget caleb cameron carl carla carlos carmen carol caroline
    casey catherine charlie charlotte chloe chris christina christopher claire clara
    colin connor craig cynthia daisy dan daniel danielle dave david debbie deepak denise
    derek diana diego dimitri dominic donna dylan eddie edward elena eli elijah elizabeth
    ella ellie emily emma eric erica erin ethan eva evelyn fatima felix fiona frank gabriel
    gareth gary george gina greg hannah harry hassan heather helen henry holly hugo
    ian isaac isabel isabella ivan jackie jacob jake james jamie jane janet jason
    jay jen jenna jennifer jenny jeremy jess jessica jim jimmy joanna joe joel john jon
    jonathan jose joseph josh joshua juan julia julian justin karen kate katie kayla
    keith kelly ken kevin kyle laura lauren leah lena leo liam lily linda lisa liz
    logan lucas lucy luis luke maddie maggie malik manuel marco marcus maria mariana marie
    mario martin mary matt matthew maya megan mei melanie melissa mia michael michelle
    miguel mike mila mohammed molly monica morgan nadia naomi natalie nathan nick nicole
    nina noah nora olivia omar oscar owen pablo pam paul paula peter phil priya rachel
    rafael raj ravi rebecca ricardo richard rob robert ryan sam samantha sara sarah scott
    sean sergei simon sofia sophia sophie stella steph stephanie steve steven sue susan
    tasha ted theo thomas tim tina tom tommy tony tyler valerie vanessa victor
    vincent wei william yuki yusuf zach zoe zara
    """.split()
)
_STOP_CAPS = {"I", "I'm", "I've", "I'd", "I'll", "OK", "Ok"}

# "what do I like", "my favourite", "which ... I enjoy": the user's tastes and habits.
_MY_TASTE = re.compile(
    r"\b(?:do|did|would|should|have|am|was) i (?:\w+ )?(?:like|love|enjoy|prefer|want|usually|"
    r"into|said|say|tell|mention)\b|\bmy (?:favou?rite|usual|taste|preference)|\bi(?:'ve| have)?"
    r" (?:mentioned|said|told)\b|\bi(?:'d| would) (?:like|enjoy|love)\b|\bmy (?:own )?taste",
    re.IGNORECASE,
)
_ABOUT_ME = re.compile(r"\b(am i|do i|did i|have i|was i|was my|is my|are my|my \w+'?s?\b.*\?)")


@dataclass(frozen=True)
class Capitals:
    """What one scan of the capitalised words of a message found."""

    bare_names: int  # a known given name alone ("did Tom call")
    full_names: int  # a given name followed by another capitalised word ("Tom Hanks")
    name_possessives: int  # "Priya's"
    mid_sentence: int  # capitalised words not at a sentence start
    lone: int  # a capitalised word alone mid-sentence ("When did Noor move?")
    runs: int  # 2+ capitalised words in a row: a famous person, a character or a title


def scan_capitals(text: str) -> Capitals:
    """One pass over the words: given names, and lone capitals against runs of them."""
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    words = list(_CAPITALISED.finditer(text))
    bare = full = possessive = mid = lone = runs = 0
    run: list[int] = []
    for i, m in enumerate([*words, None]):
        word = m.group(0) if m is not None else ""
        capital = bool(word) and word[0].isupper() and word not in _STOP_CAPS
        if capital and word.lower() not in _GREETING:
            run.append(m.start())
        else:
            if len(run) >= 2:
                runs += 1
            elif len(run) == 1 and run[0] not in starts:
                lone += 1
            run = []
        if not capital:
            continue
        mid += m.start() not in starts
        stem = word.rstrip(".")
        base = re.sub(r"['’]s$", "", stem)
        if base.lower() not in _FIRST_NAMES:
            continue
        nxt = words[i + 1].group(0) if i + 1 < len(words) else ""
        if stem != base:
            possessive += 1
            bare += 1
        elif nxt[:1].isupper() and nxt not in _STOP_CAPS:
            full += 1
        else:
            bare += 1
    return Capitals(bare, full, possessive, mid, lone, runs)


FEATURE_VERSION = 4  # bump when a feature's value changes: old weights then refuse to load


def _tokens(text: str) -> list[str]:
    return [w.replace("’", "'").lower() for w in _WORD.findall(text)]


@dataclass(frozen=True)
class Reading:
    """One gate_text read once: its words and capitals, shared by every feature."""

    text: str
    toks: list[str]
    caps: Capitals

    def count(self, vocab: set[str]) -> int:
        """How many of the words are in `vocab`."""
        return sum(t in vocab for t in self.toks)


def read(text: str) -> Reading:
    """The reading of one gate_text."""
    text = text.strip()
    return Reading(text, _tokens(text), scan_capitals(text))


def _greeting_only(r: Reading) -> float:
    return float(
        bool(r.toks) and len(r.toks) <= 6 and all(t in _GREETING | _SECOND for t in r.toks)
    )


def _pasted(r: Reading) -> float:
    text = r.text
    return float(bool(_QUOTED.search(text)) or (":" in text and len(text) > 80) or "\n" in text)


@dataclass(frozen=True)
class Feature:
    """One cue the classifier reads: its name and how it is computed, side by side."""

    name: str
    value: Callable[[Reading], float]


# The order is the trained weights' column order: add new features at the end, and bump
# FEATURE_VERSION whenever a value changes.
FEATURES: tuple[Feature, ...] = (
    Feature("first_singular", lambda r: min(r.count(_FIRST_SINGULAR), 3)),
    Feature("first_plural", lambda r: min(r.count(_FIRST_PLURAL), 3)),
    Feature("second_person", lambda r: min(r.count(_SECOND), 3)),
    Feature("possessive_my_our", lambda r: min(r.count(_POSSESSIVE), 3)),
    Feature("time_words", lambda r: min(r.count(_TIME), 3)),
    Feature("relation_words", lambda r: min(r.count(_RELATION), 3)),
    Feature("event_words", lambda r: min(r.count(_EVENT), 3)),
    Feature("earlier_chat", lambda r: float(bool(EARLIER_CHAT.search(r.text)))),
    Feature("recommend_cue", lambda r: float(bool(_RECOMMEND.search(r.text)))),
    Feature("bare_first_name", lambda r: min(r.caps.bare_names, 3)),
    Feature("full_name", lambda r: min(r.caps.full_names, 3)),
    Feature("name_possessive", lambda r: min(r.caps.name_possessives, 3)),
    Feature("proper_nouns_mid", lambda r: min(r.caps.mid_sentence, 5)),
    Feature("question_about_me", lambda r: float(bool(_ABOUT_ME.search(r.text.lower())))),
    Feature("greeting_only", _greeting_only),
    Feature("task_verb_start", lambda r: float(bool(r.toks) and r.toks[0] in _TASK_VERBS)),
    Feature("wh_start", lambda r: float(bool(r.toks) and r.toks[0] in _WH)),
    Feature("math_cue", lambda r: float(bool(_MATH.search(r.text)))),
    Feature("numbers", lambda r: min(len(_NUMBER.findall(_DATE.sub(" ", r.text))), 8) / 2.0),
    Feature("code_cue", lambda r: min(len(CODE.findall(r.text)), 4)),
    Feature("pasted_text", _pasted),
    Feature("log_chars", lambda r: math.log1p(len(r.text))),
    Feature("short", lambda r: float(max(len(r.toks), 1) <= 4)),
    Feature("question_mark", lambda r: float(r.text.endswith("?"))),
    Feature("date_or_time", lambda r: min(len(_DATE.findall(r.text)), 2)),
    Feature(
        "all_lowercase", lambda r: float(r.text == r.text.lower() and not r.text.endswith("?"))
    ),
    Feature("lone_capitalised", lambda r: min(r.caps.lone, 3)),
    Feature("capitalised_run", lambda r: min(r.caps.runs, 3)),
    Feature("my_taste", lambda r: float(bool(_MY_TASTE.search(r.text)))),
)
FEATURE_NAMES = tuple(f.name for f in FEATURES)


def hand_features(text: str) -> np.ndarray:
    """The cheap cues of one gate_text, in FEATURES order (small counts and flags)."""
    reading = read(text)
    return np.array([f.value(reading) for f in FEATURES], dtype=np.float32)
