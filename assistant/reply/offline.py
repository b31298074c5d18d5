"""The offline responder: useful replies with no model and no network, clearly labelled.

It quotes the most relevant memories, computes arithmetic with a small evaluator over
Python's AST (never eval), and says plainly what it cannot do without a model.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import time
from collections.abc import Callable, Sequence

from assistant.reply.respond import HistoryItem, Lookup, ReplyResult, ReplySource, TextCallback
from assistant.text import end_sentence
from memory.records import Memory

NEEDS_A_MODEL = (
    "I'm running offline, without a language model, so I can only do arithmetic and look "
    "things up in your memories. General questions need a model: set ANTHROPIC_API_KEY, "
    "or point ANTHROPIC_BASE_URL at a local Anthropic-compatible server (llama.cpp, Ollama)."
)
NOTHING_FOUND = (
    "I searched your memories but found nothing relevant enough to quote. "
    "(Offline mode: with a model configured I could say more.)"
)
SEARCH_FAILED = (
    "I couldn't search your memories just now (the memory store failed), so I can't "
    "answer from them."
)
MAX_QUOTED = 3


class OfflineResponder:
    """Answers from the most relevant memories, computes arithmetic, and says what it can't do."""

    source = ReplySource.OFFLINE

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock

    def compose(
        self, message: str, memories: Sequence[Memory], lookup: Lookup = Lookup.SKIPPED
    ) -> str:
        """The reply text for one message."""
        arithmetic = answer_arithmetic(message)
        if arithmetic is not None:
            return arithmetic
        if memories:
            quoted = "\n".join(f"> {m.text}" for m in memories[:MAX_QUOTED])
            noun = "memory" if len(memories[:MAX_QUOTED]) == 1 else "memories"
            return f"From your {noun}:\n\n{quoted}"
        if lookup is Lookup.FAILED:
            return SEARCH_FAILED
        return NOTHING_FOUND if lookup is Lookup.SEARCHED else NEEDS_A_MODEL

    def reply(
        self,
        message: str,
        memories: Sequence[Memory],
        history: Sequence[HistoryItem],
        on_text: TextCallback | None = None,
        lookup: Lookup = Lookup.SKIPPED,
        meant: str = "",  # noqa: ARG002 - the offline responder answers from memories alone
    ) -> ReplyResult:
        """Reply at once; no tokens are spent."""
        started = self._clock()
        text = self.compose(message, memories, lookup)
        if on_text is not None:
            on_text(text)
        elapsed = (self._clock() - started) * 1000.0
        return ReplyResult(
            text=text, source=self.source, first_token_ms=elapsed, elapsed_ms=elapsed
        )


# ---- arithmetic: a tiny evaluator over the parsed expression, no eval -------------

MAX_EXPRESSION_CHARS = 200
MAX_DEPTH = 30
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e300

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}

# "what's 2+2?", "calculate (3 * 4) ^ 2", "12 x 7", "what is 15% of 80"
_WORDS = re.compile(
    r"^\s*(?:(?:what\s*(?:'s|is)|whats|calculate|compute|evaluate|how much is|solve)\s*)?"
    r"(?P<expr>[-+*/%^().,\d\sx×÷]+?)\s*[=?.!]*\s*$",
    re.IGNORECASE,
)
_PERCENT_OF = re.compile(
    r"^\s*(?:what\s*(?:'s|is)\s*)?(?P<pct>\d+(?:\.\d+)?)\s*%\s*of\s*(?P<num>\d+(?:\.\d+)?)\s*\??\s*$",
    re.IGNORECASE,
)


# Numbers that are written with operator characters but are not sums. Checked on the
# expression the message holds, before it is evaluated.
_NOT_ARITHMETIC = re.compile(
    # three or more numbers joined by the same - / or . with no spaces, on their own: dates
    # (2024-12-25, 12/25/2024), versions (1.2.3), ids and long phone numbers (1-800-555-0199)
    r"(?<![-+*/%^x×÷(\d.])\d+([-/.])\d+(?:\1\d+)+(?![-+*/%^x×÷)\d.])"
    # a local phone number: 555-1234
    r"|(?<![\d.,])\d{3}-\d{4}(?![\d.,])"
    # numbers side by side with only spaces between: (555) 123-4567, +1 617 555 0100
    r"|[\d)]\s+\(?\d"
    # a leading zero: ids, extensions, padded parts (007-12, 0199)
    r"|(?<![\d.,])0\d"
)


class SumError(ValueError):
    """The expression is not plain arithmetic, or is too big to compute safely."""


def _eval(node: ast.AST, depth: int = 0) -> float | int:
    if depth > MAX_DEPTH:
        raise SumError("expression is nested too deeply")
    if isinstance(node, ast.Expression):
        return _eval(node.body, depth + 1)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, depth + 1))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _eval(node.left, depth + 1)
        right = _eval(node.right, depth + 1)
        if isinstance(node.op, ast.Pow) and (
            abs(right) > MAX_EXPONENT
            or (abs(left) > 1 and abs(right) * math.log10(abs(left)) > 300)
        ):
            raise SumError("that power is too large to compute")
        try:
            value = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise SumError("division by zero") from None
        except OverflowError:  # e.g. 0.00…01 ^ -2: the power check only bounds |base| > 1
            raise SumError("the result is too large") from None
        if isinstance(value, complex):
            raise SumError("the result is not a real number")
        if abs(value) > MAX_MAGNITUDE:
            raise SumError("the result is too large")
        return value
    raise SumError("only numbers and + - * / // % ^ ( ) are allowed")


def evaluate(expression: str) -> float | int:
    """Evaluate plain arithmetic; raises SumError for anything else."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise SumError("expression is too long")
    cleaned = expression.replace("^", "**").replace("×", "*").replace("÷", "/")
    cleaned = re.sub(r"(?<=\d)\s*x\s*(?=[\d(])", "*", cleaned)
    cleaned = re.sub(r"(?<=\d),(?=\d{3}\b)", "", cleaned)  # 1,000 -> 1000
    try:
        tree = ast.parse(cleaned.strip(), mode="eval")
    except (SyntaxError, ValueError):
        raise SumError("not an arithmetic expression") from None
    return _eval(tree)


def format_number(value: float | int) -> str:
    """12.0 -> '12', 0.333333 -> '0.333333'."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def is_arithmetic(expression: str) -> bool:
    """True when the text is a sum to compute, not a date, time, phone number, version or id."""
    return (
        re.search(r"\d", expression) is not None
        and re.search(r"[-+*/%^x×÷]", expression) is not None
        and _NOT_ARITHMETIC.search(expression) is None
    )


def answer_arithmetic(message: str) -> str | None:
    """'what's 2+2?' -> '2 + 2 = 4'; None when the message is not arithmetic."""
    pct = _PERCENT_OF.match(message)
    if pct:
        value = float(pct["pct"]) / 100 * float(pct["num"])
        return f"{pct['pct']}% of {pct['num']} = {format_number(value)}"
    match = _WORDS.match(message)
    if not match or not is_arithmetic(match["expr"]):
        return None
    expression = match["expr"].strip()
    try:
        value = evaluate(expression)
    except SumError as exc:
        return end_sentence(f"I can't compute that offline: {exc}")
    return f"{expression} = {format_number(value)}"
