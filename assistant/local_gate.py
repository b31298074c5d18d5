"""The local gate: a small classifier over MiniLM embeddings and cheap text cues.

It makes the same narrow decision as the LLM gate (does this message need the user's
memory?) in a few milliseconds, with no network and no key. A plain reference to earlier
chats ("what did you recommend me?") retrieves whatever the classifier says.
`CascadeGate` runs it first and asks the LLM only when the local probability falls in an
unsure band. `build_gate` turns a gate mode from the settings into a gate.

The weights are trained by `python -m assistant.train_gate` on the project's own data
(`assistant/data/gate_train.jsonl`) and ship as `assistant/data/local_gate.npz`.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assistant.gate import (
    Gate,
    GateDecision,
    LlmGate,
    Method,
    always_gate,
    bounded,
    empty_decision,
    length_gate,
    never_gate,
)

if TYPE_CHECKING:  # memory.embeddings imports chromadb: only pay for it when the gate runs
    from assistant.config import Settings
    from memory.embeddings import MiniLM

WEIGHTS_PATH = Path(__file__).parent / "data" / "local_gate.npz"
FEATURE_VERSION = 3  # bump when hand_features changes: old weights then refuse to load

# --- cheap text cues -------------------------------------------------------------------
# Word lists are deliberately generic (not tuned to any evaluation set): they name the
# kinds of words that point at the user's own life, or at a self-contained question.

_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_FIRST_SINGULAR = {"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll", "im"}
_FIRST_PLURAL = {"we", "us", "our", "ours", "we're", "we've", "we'd", "we'll", "let's"}
_SECOND = {"you", "your", "yours", "you're", "you've", "u"}
_POSSESSIVE = {"my", "our"}
_TIME = set(
    "today tonight tomorrow yesterday morning afternoon evening weekend week month year "
    "monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun "
    "january february march april june july august september october november december "
    "next last later soon ago upcoming o'clock am pm noon midnight schedule calendar "
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
_RECALL = re.compile(
    r"\b(remember|recall|remind me|told you|tell you|i said|i mentioned|did i (?:say|tell|"
    r"mention)|last time|again\b|before\b|we (?:talked|discussed|chatted)|you (?:said|told|"
    r"suggested|recommended))",
    re.IGNORECASE,
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

# Common given names: a name used alone ("Priya's daughter", "did Tom call") points at
# someone the user knows; famous people are named in full or by surname ("Einstein").
# Names that are also ordinary words (May, Will, Grace, Mark...) are left out.
_FIRST_NAMES = set(
    """
    aaron abby adam adrian ahmed aidan aisha alan albert alex alexa alexander alexis
    alice alicia alison amanda amber amelia amir amy ana andrea andy angela anna anne annie
    anthony antonio arjun arthur ashley austin ava barbara becky ben benjamin beth bianca
    brandon brenda brian bridget caleb cameron carl carla carlos carmen carol caroline
    casey catherine charlie charlotte chen chloe chris christina christopher claire clara
    colin connor craig cynthia daisy dan daniel danielle dave david debbie deepak denise
    derek diana diego dimitri dominic donna dylan eddie edward elena eli elijah elizabeth
    ella ellie emily emma eric erica erin ethan eva evelyn fatima felix fiona frank gabriel
    gareth gary george georgia gina greg hannah harry hassan heather helen henry holly hugo
    ian isaac isabel isabella ivan jack jackie jacob jade jake james jamie jane janet jason
    jay jen jenna jennifer jenny jeremy jess jessica jim jimmy joanna joe joel john jon
    jonathan jordan jose joseph josh joshua juan julia julian justin karen kate katie kayla
    keith kelly ken kevin kim kyle laura lauren leah lena leo liam lily linda lisa liz
    logan lucas lucy luis luke maddie maggie malik manuel marco marcus maria mariana marie
    mario martin mary matt matthew max maya megan mei melanie melissa mia michael michelle
    miguel mike mila mohammed molly monica morgan nadia naomi natalie nathan nick nicole
    nina noah nora olivia omar oscar owen pablo pam paul paula peter phil priya rachel
    rafael raj ravi rebecca ricardo richard rob robert ryan sam samantha sara sarah scott
    sean sergei simon sofia sophia sophie stella steph stephanie steve steven sue susan
    tasha taylor ted theo thomas tim tina tom tommy tony tyler valerie vanessa victor
    vincent wei william yuki yusuf zach zoe zara
    """.split()
)
_STOP_CAPS = {"I", "I'm", "I've", "I'd", "I'll", "OK", "Ok"}
# "What did you suggest to me", "what you told me": the assistant's own earlier words.
_YOU_TOLD_ME = re.compile(
    r"\byou(?:'ve| have)? (?:\w+ )?(?:recommend|suggest|mention|told|said|gave|give|put|show|"
    r"tell|advis|pick|propos|share)\w*\b|\b(?:recommend|suggest|mention|told|gave)\w* (?:to )?"
    r"(?:me|i)\b",
    re.IGNORECASE,
)
# "what do I like", "my favourite", "which ... I enjoy": the user's tastes and habits.
_MY_TASTE = re.compile(
    r"\b(?:do|did|would|should|have|am|was) i (?:\w+ )?(?:like|love|enjoy|prefer|want|usually|"
    r"into|said|say|tell|mention)\b|\bmy (?:favou?rite|usual|taste|preference)|\bi(?:'ve| have)?"
    r" (?:mentioned|said|told)\b|\bi(?:'d| would) (?:like|enjoy|love)\b|\bmy (?:own )?taste",
    re.IGNORECASE,
)

# An explicit reference to earlier chats or to the user's own stored facts ("did you
# recommend", "what did I tell you", "do I like", "remind me what") always retrieves,
# whatever the classifier says: it is the clearest memory signal there is, a false alarm
# costs one ~10 ms search, and the classifier's blind spots are other authors' phrasings.
_YOU = r"(?:you|u|ya)"  # people type "did u say" as often as "did you say"
_EXPLICIT_MEMORY = re.compile(
    rf"\b(?:do|did|can|could) {_YOU} (?:still )?(?:remember|recall)\b"
    r"|\bremind me (?:what|which|who|when|where|how|of|about|again)\b"
    r"|\b(?:i|we) (?:told|mentioned|said|talked about|discussed)\b"
    r"|\b(?:did|have) i (?:ever )?(?:tell|told|mention|say|share)\b"
    rf"|\b{_YOU} (?:recommended|suggested|told me|mentioned|said)\b"
    rf"|\bdid {_YOU} (?:recommend|suggest|tell me|mention|say)\b"
    r"|\b(?:recommended|suggested) (?:to )?me\b"
    rf"|\blast time (?:we|i|{_YOU})\b"
    r"|\bdo i (?:like|love|enjoy|prefer|usually|normally|always)\b"
    # The user's own past: "where did I go on the 3rd?", "what was the cafe I liked?"
    r"|\b(?:what|which|where|when|who|how) did i\b"
    r"|\bwhat (?:was|were) (?:the|that|those) (?:[\w']+ ){1,5}(?:that )?i\b",
    re.IGNORECASE,
)
# "What's my ..." asks for a stored fact, unless the message carries the numbers itself
# ("I'm 170 cm and 68 kg, what's my BMI?").
_ASKS_MY = re.compile(r"\bwhat(?:'s|’s|s| is| was| are| were) my\b", re.IGNORECASE)


def explicit_memory_reference(message: str) -> bool:
    """True when the message plainly asks about earlier chats or the user's stored facts.

    Not when the message carries its own material (pasted lines, code): "what did I do
    wrong here: <code>" is answered from the message, not from memory. A quoted title
    ('the "Night Circus" book you suggested') is a reference, not material.
    """
    if "\n" in message.strip() or len(_CODE.findall(message)) >= 2:
        return False
    if _EXPLICIT_MEMORY.search(message):
        return True
    return bool(_ASKS_MY.search(message)) and not re.search(r"\d", message)


FEATURE_NAMES = (
    "first_singular",
    "first_plural",
    "second_person",
    "possessive_my_our",
    "time_words",
    "relation_words",
    "event_words",
    "recall_cue",
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
    "you_told_me",
    "my_taste",
)


def _tokens(text: str) -> list[str]:
    return [w.replace("’", "'").lower() for w in _WORD.findall(text)]


def _name_cues(text: str) -> tuple[int, int, int, int]:
    """(bare first names, full names, "Name's", capitalised words mid-sentence)."""
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    bare = full = possessive = mid = 0
    words = list(re.finditer(r"[A-Za-z][\w'’.-]*", text))
    for i, m in enumerate(words):
        word = m.group(0).rstrip(".")
        if not word[0].isupper() or word in _STOP_CAPS:
            continue
        if m.start() not in starts:
            mid += 1
        base = re.sub(r"['’]s$", "", word)
        if base.lower() not in _FIRST_NAMES:
            continue
        nxt = words[i + 1].group(0) if i + 1 < len(words) else ""
        if word != base:
            possessive += 1
            bare += 1
        elif nxt[:1].isupper() and nxt not in _STOP_CAPS:
            full += 1
        else:
            bare += 1
    return bare, full, possessive, mid


def _capitalised_runs(text: str) -> tuple[int, int]:
    """(lone capitalised words mid-sentence, runs of 2+ capitalised words).

    A given name alone ("When did Noor move?") points at someone the user knows; a
    run of capitalised words ("Amelia Earhart", "The Great Gatsby") at a famous person,
    a character or a title.
    """
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    lone = runs = 0
    run: list[int] = []
    words = list(re.finditer(r"[A-Za-z][\w'’.-]*", text)) + [None]
    for m in words:
        capital = (
            m is not None
            and m.group(0)[0].isupper()
            and m.group(0) not in _STOP_CAPS
            and m.group(0).lower() not in _GREETING
        )
        if capital:
            run.append(m.start())
            continue
        if len(run) >= 2:
            runs += 1
        elif len(run) == 1 and run[0] not in starts:
            lone += 1
        run = []
    return lone, runs


def hand_features(message: str) -> np.ndarray:
    """The cheap cues of one message, in FEATURE_NAMES order (small counts and flags)."""
    text = message.strip()
    toks = _tokens(text)
    n = max(len(toks), 1)
    count = lambda vocab: sum(t in vocab for t in toks)  # noqa: E731 - local helper
    bare, full, possessive, mid = _name_cues(text)
    lone, runs = _capitalised_runs(text)
    first = count(_FIRST_SINGULAR)
    lowered = text.lower()
    about_me = bool(
        re.search(r"\b(am i|do i|did i|have i|was i|was my|is my|are my|my \w+'?s?\b.*\?)", lowered)
    )
    greeting_only = bool(toks) and len(toks) <= 6 and all(t in _GREETING | _SECOND for t in toks)
    dates = len(_DATE.findall(text))
    numbers = len(_NUMBER.findall(_DATE.sub(" ", text)))
    return np.array(
        [
            min(first, 3),
            min(count(_FIRST_PLURAL), 3),
            min(count(_SECOND), 3),
            min(count(_POSSESSIVE), 3),
            min(count(_TIME), 3),
            min(count(_RELATION), 3),
            min(count(_EVENT), 3),
            float(bool(_RECALL.search(text))),
            float(bool(_RECOMMEND.search(text))),
            min(bare, 3),
            min(full, 3),
            min(possessive, 3),
            min(mid, 5),
            float(about_me),
            float(greeting_only),
            float(bool(toks) and toks[0] in _TASK_VERBS),
            float(bool(toks) and toks[0] in _WH),
            float(bool(_MATH.search(text))),
            min(numbers, 8) / 2.0,
            min(len(_CODE.findall(text)), 4),
            float(bool(_QUOTED.search(text)) or (":" in text and len(text) > 80) or "\n" in text),
            math.log1p(len(text)),
            float(n <= 4),
            float(text.endswith("?")),
            min(dates, 2),
            float(text == text.lower() and not text.endswith("?")),
            min(lone, 3),
            min(runs, 3),
            float(bool(_YOU_TOLD_ME.search(text))),
            float(bool(_MY_TASTE.search(text))),
        ],
        dtype=np.float32,
    )


def _reason(message: str, retrieve: bool, p: float, explicit: bool, by_rule: bool) -> str:
    """A short, honest label: the strongest cue we can name, and the probability.

    `explicit` says the explicit-reference rule matched; `by_rule` that the rule made a
    retrieve against the classifier, so the badge does not pretend the probability did.
    """
    f = dict(zip(FEATURE_NAMES, hand_features(message), strict=True))
    if by_rule:
        return f"about past chats or your facts (rule), p={p:.2f}"
    if retrieve:
        if explicit:
            cue = "about past chats or your facts"
        elif f["recall_cue"] and f["first_singular"]:
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


# --- the classifier ----------------------------------------------------------------------


@dataclass(frozen=True)
class GateWeights:
    """A trained logistic regression over [embedding, hand features], standardised."""

    coef: np.ndarray  # (d,)
    intercept: float
    mean: np.ndarray  # (d,) feature means on the training split
    scale: np.ndarray  # (d,) feature standard deviations on the training split
    threshold: float  # P(retrieve) at or above which we retrieve
    cascade_low: float  # unsure band for the cascade: [low, high)
    cascade_high: float
    l2: float
    cue_ratio: float = 1.0  # hand cues were penalised with l2 * cue_ratio
    feature_version: int = FEATURE_VERSION
    dataset_sha256: str = ""

    def probability(self, features: np.ndarray) -> np.ndarray:
        """P(retrieve) for a (n, d) feature matrix."""
        z = ((features - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))

    def save(self, path: Path) -> None:
        """Write the weights as a small .npz (float32 where precision allows)."""
        np.savez_compressed(
            path,
            coef=self.coef.astype(np.float64),
            intercept=np.float64(self.intercept),
            mean=self.mean.astype(np.float64),
            scale=self.scale.astype(np.float64),
            threshold=np.float64(self.threshold),
            cascade_low=np.float64(self.cascade_low),
            cascade_high=np.float64(self.cascade_high),
            l2=np.float64(self.l2),
            cue_ratio=np.float64(self.cue_ratio),
            feature_version=np.int64(self.feature_version),
            feature_names=np.array(FEATURE_NAMES),
            dataset_sha256=np.array(self.dataset_sha256),
        )

    @classmethod
    def load(cls, path: Path) -> GateWeights:
        """Read weights written by `save`; refuses files from another feature version."""
        if not Path(path).is_file():
            raise FileNotFoundError(
                f"Local gate weights not found at {path}. Fix: python -m assistant.train_gate"
            )
        with np.load(path, allow_pickle=False) as data:
            version = int(data["feature_version"])
            if version != FEATURE_VERSION or tuple(data["feature_names"]) != FEATURE_NAMES:
                raise ValueError(
                    f"{path} was trained for features v{version}, this code computes "
                    f"v{FEATURE_VERSION}. Fix: python -m assistant.train_gate"
                )
            return cls(
                coef=data["coef"],
                intercept=float(data["intercept"]),
                mean=data["mean"],
                scale=data["scale"],
                threshold=float(data["threshold"]),
                cascade_low=float(data["cascade_low"]),
                cascade_high=float(data["cascade_high"]),
                l2=float(data["l2"]),
                cue_ratio=float(data["cue_ratio"]),
                feature_version=version,
                dataset_sha256=str(data["dataset_sha256"]),
            )


_WRAPPING_QUOTES = re.compile(r'^\s*["“\'](.*)["”\']\s*$', re.DOTALL)


def unwrap(message: str) -> str:
    """The message without quotes wrapped around all of it (a pasted question)."""
    match = _WRAPPING_QUOTES.match(message)
    return match.group(1).strip() if match else message.strip()


def gate_text(message: str) -> str:
    """What the local gate reads: the bounded message, without wrapping quotes."""
    return unwrap(bounded(message)[0])


def featurize(model: MiniLM, messages: list[str]) -> np.ndarray:
    """[MiniLM embedding | hand features] for each message, shape (n, 384 + cues)."""
    # Quotes around the whole message would look like pasted text to the cues.
    texts = [gate_text(m) for m in messages]
    embedded = model.encode(texts)
    cues = np.stack([hand_features(t) for t in texts]) if texts else np.zeros((0, 0))
    return np.hstack([embedded.astype(np.float64), cues.astype(np.float64)])


class LocalGate:
    """The trained classifier as a gate: ~5 ms a decision, no network."""

    name = "local"

    def __init__(
        self,
        model: MiniLM | None = None,
        weights_path: Path = WEIGHTS_PATH,
        threshold: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._model = model
        self._weights_path = Path(weights_path)
        self._threshold = threshold
        self._clock = clock
        self._weights: GateWeights | None = None
        self._lock = threading.Lock()

    @property
    def weights(self) -> GateWeights:
        """The trained weights, loaded on first use."""
        with self._lock:
            if self._weights is None:
                self._weights = GateWeights.load(self._weights_path)
            return self._weights

    @property
    def threshold(self) -> float:
        """P(retrieve) at or above which the gate retrieves."""
        return self.weights.threshold if self._threshold is None else self._threshold

    @property
    def weights_path(self) -> Path:
        """Where the weights are read from."""
        return self._weights_path

    def encoder(self) -> MiniLM:
        """The embedding model (the process-wide shared one unless given)."""
        if self._model is None:
            from memory.embeddings import shared_model

            self._model = shared_model()
        return self._model

    def warm(self) -> None:
        """Load weights and the embedding model so the first decision is fast."""
        _ = self.weights
        self.encoder().warm()

    def probabilities(self, messages: list[str]) -> np.ndarray:
        """The classifier's P(retrieve) for many messages (one batched embedding call)."""
        return self.weights.probability(featurize(self.encoder(), messages))

    def retrieves(self, messages: list[str]) -> np.ndarray:
        """The gate's decisions for many messages: the classifier or an explicit reference."""
        explicit = [explicit_memory_reference(gate_text(m)) for m in messages]
        return (self.probabilities(messages) >= self.threshold) | np.array(explicit, dtype=bool)

    def probability(self, message: str) -> float:
        """The classifier's P(retrieve) for one message (no timing, no decision)."""
        return float(self.probabilities([message])[0])

    def decide(self, message: str) -> GateDecision:
        """Classify one message; the reason names the strongest cue and the probability."""
        if not message.strip():
            return empty_decision(self.name)
        started = self._clock()
        text, truncated = bounded(message)
        p = self.probability(text)
        explicit = explicit_memory_reference(gate_text(text))
        retrieve = explicit or p >= self.threshold
        return GateDecision(
            retrieve=retrieve,
            query=memory_query(text) if retrieve else "",
            reason=_reason(text, retrieve, p, explicit, by_rule=explicit and p < self.threshold),
            method=Method.LOCAL,
            gate=self.name,
            elapsed_ms=(self._clock() - started) * 1000.0,
            truncated=truncated,
            confidence=p,
        )


class CascadeGate:
    """Local gate first; the LLM gate only when the local probability is unsure."""

    name = "cascade"

    def __init__(
        self,
        local: LocalGate,
        llm: Gate,
        low: float | None = None,
        high: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.local = local
        self.llm = llm
        self._low = low
        self._high = high
        self._clock = clock
        self.llm_calls = 0  # how many decisions were handed to the LLM, for reports

    @property
    def band(self) -> tuple[float, float]:
        """The unsure band [low, high) of P(retrieve) that goes to the LLM."""
        weights = self.local.weights
        low = weights.cascade_low if self._low is None else self._low
        high = weights.cascade_high if self._high is None else self._high
        return low, high

    def decide(self, message: str) -> GateDecision:
        """Decide locally when sure; otherwise return the LLM's decision (it fails open)."""
        if not message.strip():
            return empty_decision(self.name)
        started = self._clock()
        local = self.local.decide(message)
        low, high = self.band
        p = local.confidence if local.confidence is not None else 0.5
        # An explicit memory reference already retrieves: nothing for the LLM to settle.
        if low <= p < high and not explicit_memory_reference(gate_text(message)):
            self.llm_calls += 1
            asked = self.llm.decide(message)
            return replace(
                asked,
                gate=self.name,
                confidence=p,
                elapsed_ms=(self._clock() - started) * 1000.0,
            )
        return replace(local, gate=self.name, elapsed_ms=(self._clock() - started) * 1000.0)


class GateConfigError(ValueError):
    """A gate mode cannot be built with what is configured."""


_shared_local: LocalGate | None = None
_shared_lock = threading.Lock()


def shared_local_gate() -> LocalGate:
    """One LocalGate per process: the weights and the encoder load once."""
    global _shared_local
    with _shared_lock:
        if _shared_local is None:
            _shared_local = LocalGate()
        return _shared_local


def build_gate(mode: str, settings: Settings, client: Any | None) -> Gate:
    """The gate for a mode: llm, local, cascade, always, never or length."""
    mode = mode.strip().lower()
    if mode in ("llm", "cascade"):
        if client is None:
            raise GateConfigError(
                f"gate mode '{mode}' needs a model: set ANTHROPIC_API_KEY, or "
                "ANTHROPIC_BASE_URL for a local Anthropic-compatible server"
            )
        llm = LlmGate(client, settings.gate_model, timeout=settings.gate_timeout)
        return llm if mode == "llm" else CascadeGate(shared_local_gate(), llm)
    simple: dict[str, Callable[[], Gate]] = {
        "local": shared_local_gate,
        "always": always_gate,
        "never": never_gate,
        "length": length_gate,
    }
    if mode not in simple:
        known = "llm, local, cascade, always, never, length"
        raise GateConfigError(f"unknown gate mode {mode!r}; choose one of {known}")
    return simple[mode]()
