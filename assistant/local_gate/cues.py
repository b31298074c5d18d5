"""The cheap text cues the local gate reads beside the embedding, and the explicit rule.

Word lists are deliberately generic (not tuned to any evaluation set): they name the
kinds of words that point at the user's own life, or at a self-contained question.
Everything here reads `gate_text(message)`, the same text the classifier embeds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from assistant.gate import bounded

FEATURE_VERSION = 4  # bump when hand_features changes: old weights then refuse to load

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
_CODE = re.compile(
    r"(\bdef |\breturn\b|\bimport |\bprint\(|;\s*$|[{}]|==|\bSELECT\b|\bFROM\b|=>|\(\)|"
    r"\w+\(\w*\)|Error\b|```)",
    re.MULTILINE,
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

# The one pattern for a reference to earlier chats: what the user told the assistant, or
# the assistant told the user. It is both a feature and, through explicit_memory_reference,
# the rule; past tenses only, so "can you tell me a joke" is not a reference.
_YOU = r"(?:you|u|ya)"  # people type "did u say" as often as "did you say"
_ONCE = r"(?:once |already |previously |earlier |just )?"  # "I once told you", "you already said"
_MADE = (
    r"wrote|drafted|made|listed|laid out|put together|came up with|worked out|sketched"
    r"|planned|calculated|suggested|recommended"
)
_EARLIER_CHAT = re.compile(
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
# cafe I liked". Part of the rule; `_MY_TASTE` below is the broader feature.
_OWN_PAST = re.compile(
    r"\bdo i (?:like|love|enjoy|prefer|usually|normally|always)\b"
    r"|\b(?:what|which|where|when|who|how) did i\b"
    r"|\bwhat (?:was|were) (?:the|that|those) (?:[\w']+ ){1,5}(?:that )?i\b",
    re.IGNORECASE,
)
# "what do I like", "my favourite", "which ... I enjoy": the user's tastes and habits.
_MY_TASTE = re.compile(
    r"\b(?:do|did|would|should|have|am|was) i (?:\w+ )?(?:like|love|enjoy|prefer|want|usually|"
    r"into|said|say|tell|mention)\b|\bmy (?:favou?rite|usual|taste|preference)|\bi(?:'ve| have)?"
    r" (?:mentioned|said|told)\b|\bi(?:'d| would) (?:like|enjoy|love)\b|\bmy (?:own )?taste",
    re.IGNORECASE,
)
# "What's my ..." asks for a stored fact, unless the message carries its own context:
# the numbers ("I'm 170 cm and 68 kg, what's my BMI?") or a description of the user's
# situation before the question ("I'm allergic to cats, what are my options?").
_ASKS_MY = re.compile(r"\bwhat(?:'s|’s|s| is| was| are| were) my\b", re.IGNORECASE)
_SETS_CONTEXT = re.compile(
    r"\bi(?:'m|’m| am| have| had| live| work| want| need|'ve| got)\b", re.IGNORECASE
)
_ABOUT_ME = re.compile(r"\b(am i|do i|did i|have i|was i|was my|is my|are my|my \w+'?s?\b.*\?)")

_WRAPPING_QUOTES = re.compile(r'^\s*["“\'](.*)["”\']\s*$', re.DOTALL)


def unwrap(message: str) -> str:
    """The message without quotes wrapped around all of it (a pasted question)."""
    match = _WRAPPING_QUOTES.match(message)
    return match.group(1).strip() if match else message.strip()


def gate_text(message: str) -> str:
    """What the local gate reads: the bounded message, without wrapping quotes."""
    return unwrap(bounded(message)[0])


def carries_material(text: str) -> bool:
    """True when the message brings its own material: pasted lines or code."""
    return "\n" in text.strip() or len(_CODE.findall(text)) >= 2


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
    if _EARLIER_CHAT.search(text) or _OWN_PAST.search(text):
        return True
    asks = _ASKS_MY.search(text)
    if asks is None or re.search(r"\d", text):
        return False
    return not _SETS_CONTEXT.search(text[: asks.start()])


FEATURE_NAMES = (
    "first_singular",
    "first_plural",
    "second_person",
    "possessive_my_our",
    "time_words",
    "relation_words",
    "event_words",
    "earlier_chat",
    "recommend_cue",
    "bare_first_name",
    "full_name",
    "name_possessive",
    "proper_nouns_mid",
    "question_about_me",
    "greeting_only",
    "task_verb_start",
    "wh_start",
    "math_cue",
    "numbers",
    "code_cue",
    "pasted_text",
    "log_chars",
    "short",
    "question_mark",
    "date_or_time",
    "all_lowercase",
    "lone_capitalised",
    "capitalised_run",
    "my_taste",
)


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


def _tokens(text: str) -> list[str]:
    return [w.replace("’", "'").lower() for w in _WORD.findall(text)]


def hand_features(text: str) -> np.ndarray:
    """The cheap cues of one gate_text, in FEATURE_NAMES order (small counts and flags)."""
    text = text.strip()
    toks = _tokens(text)

    def count(vocab: set[str]) -> int:
        return sum(t in vocab for t in toks)

    caps = scan_capitals(text)
    greeting_only = bool(toks) and len(toks) <= 6 and all(t in _GREETING | _SECOND for t in toks)
    numbers = len(_NUMBER.findall(_DATE.sub(" ", text)))
    pasted = bool(_QUOTED.search(text)) or (":" in text and len(text) > 80) or "\n" in text
    return np.array(
        [
            min(count(_FIRST_SINGULAR), 3),
            min(count(_FIRST_PLURAL), 3),
            min(count(_SECOND), 3),
            min(count(_POSSESSIVE), 3),
            min(count(_TIME), 3),
            min(count(_RELATION), 3),
            min(count(_EVENT), 3),
            float(bool(_EARLIER_CHAT.search(text))),
            float(bool(_RECOMMEND.search(text))),
            min(caps.bare_names, 3),
            min(caps.full_names, 3),
            min(caps.name_possessives, 3),
            min(caps.mid_sentence, 5),
            float(bool(_ABOUT_ME.search(text.lower()))),
            float(greeting_only),
            float(bool(toks) and toks[0] in _TASK_VERBS),
            float(bool(toks) and toks[0] in _WH),
            float(bool(_MATH.search(text))),
            min(numbers, 8) / 2.0,
            min(len(_CODE.findall(text)), 4),
            float(pasted),
            math.log1p(len(text)),
            float(max(len(toks), 1) <= 4),
            float(text.endswith("?")),
            min(len(_DATE.findall(text)), 2),
            float(text == text.lower() and not text.endswith("?")),
            min(caps.lone, 3),
            min(caps.runs, 3),
            float(bool(_MY_TASTE.search(text))),
        ],
        dtype=np.float32,
    )


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


_FILLER = re.compile(
    r"^\s*(?:(?:hey|hi|hello|ok|okay|so|um|uh|oh|well|quick question)\b[,!.\s]*)*"
    r"(?:(?:can|could|would) you (?:please )?(?:remind me|tell me|check|look up)?\s*|"
    r"(?:please )?remind me\s*|do you (?:remember|recall)\s*|tell me\s*)?",
    re.IGNORECASE,
)
_TRAILING_FILLER = re.compile(r"(?:,?\s*(?:again|please|by the way|btw))+\s*([?.!]*)\s*$", re.I)


def memory_query(message: str) -> str:
    """The message with leading/trailing filler removed, for the memory search."""
    query = _FILLER.sub("", message.strip(), count=1)
    query = _TRAILING_FILLER.sub(r"\1", query).strip(" ,")
    return query if len(query) >= 3 else message.strip()
