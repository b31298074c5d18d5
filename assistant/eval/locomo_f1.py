"""LoCoMo's token F1: its normalisation and multiset token F1, by question category.

As LoCoMo's evaluation computes it (the rules are in assistant/eval/answer_score.py's
docstring), without Porter stemming.
"""

from __future__ import annotations

import re
import string
from collections import Counter


def locomo_normalise(text: str) -> str:
    """LoCoMo's answer normalisation: no commas, punctuation or a/an/the/and; lower case."""
    text = str(text).replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


def token_f1(prediction: str, gold: str) -> float:
    """Multiset token F1 between a prediction and one gold answer, LoCoMo-normalised."""
    pred = locomo_normalise(prediction).split()
    ref = locomo_normalise(gold).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def locomo_f1(prediction: str, gold: object, category: int) -> float:
    """A LoCoMo QA's score as its evaluation computes it, by category (1-4)."""
    answer = str(gold)
    if category == 3:
        answer = answer.split(";")[0].strip()
    if category == 1:
        # Multi-hop answers list several items: each gold part takes its best prediction part.
        preds = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in answer.split(",")]
        return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)
    return token_f1(prediction, answer)
