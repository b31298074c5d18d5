"""Add real, human-written messages from permissively licensed datasets to the gate's data.

    python training/import_real.py --clinc data_full.json --dolly dolly.jsonl \
        --arena arena-hard-v0.1/question.jsonl arena-hard-v2.0/question.jsonl \
        --webquestions trainmodel.json val.json devtest.json test.json

Rewrites the rows of the origins given on the command line in
`training/data/gate_train.jsonl` and keeps every other row. Sources, commits, paths and
licenses: `training/data/README.md` (and, for the weights, `assistant/data/NOTICE.md`).
- CLINC150 (`clinc/oos-eval`, `data/data_full.json`, CC BY 3.0): queries that crowd workers
  wrote for a task assistant, labelled here by intent. Intents that ask about the user's
  own records (calendar, reminders, spending, what they told the assistant their name is)
  are `retrieve`; self-contained how-tos, definitions, conversions, trivia and small talk
  are `skip`. Intents that are commands (book, set, add) or that need a live service
  rather than memory are left out, so no label is a guess.
- databricks-dolly-15k (a 151-row sample, CC BY-SA 3.0): instructions Databricks employees
  wrote for an assistant; all self-contained, so all `skip`.
- Arena-Hard-Auto prompts (`lmarena/arena-hard-auto`, Apache-2.0): what people really
  typed into Chatbot Arena (code, maths, writing, advice with its own context), the
  English ones; all self-contained, so all `skip`.
- WebQuestions (`brmson/dataset-factoid-webquestions`, CC BY 4.0): questions people typed
  into Google (collected through Google Suggest), a sample of 1,200; all `skip`.

Rows go a quarter to `heldout` by a hash of the message. Run `training/make_gate_data.py`
afterwards: it drops any row near an evaluation message.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

from memory.jsonl import read_jsonl

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "gate_train.jsonl"
SEED = 20261201

# The user's own records and history: a memory of the user would hold the answer. About
# as many rows as the skip intents below, so that the real voice is no cue for either label.
CLINC_RETRIEVE = {
    intent: 40
    for intent in (
        "calendar meeting_schedule reminder todo_list shopping_list spending_history "
        "transactions last_maintenance user_name pto_used pto_balance pto_request_status "
        "income payday bill_due bill_balance balance order_status insurance taxes "
        "application_status rewards_balance credit_score credit_limit min_payment"
    ).split()
}
# Answerable from the message and general knowledge alone. Open suggestions
# (travel_suggestion, meal_suggestion) are left out: this project labels "what should I
# do this weekend?" retrieve, since the user's stored tastes make the answer.
CLINC_SKIP = {
    intent: 22
    for intent in (
        "recipe cook_time ingredients_list definition fun_fact jump_start oil_change_how "
        "vaccines international_visa plug_type carry_on calories nutrition_info "
        "measurement_conversion timezone translate spelling calculator improve_credit_score "
        "food_last tell_joke greeting goodbye thank_you who_made_you what_is_your_name "
        "are_you_a_bot how_old_are_you what_are_your_hobbies do_you_have_pets "
        "where_are_you_from meaning_of_life flip_coin roll_dice ingredient_substitution"
    ).split()
}
OUT_OF_SCOPE = 120  # CLINC's out-of-scope queries: general requests, no intent
# Out-of-scope queries about the user's own things might need memory: left out.
_PERSONAL = re.compile(r"\b(my|mine|did i|have i|was i|am i|i'm|i've|we)\b", re.IGNORECASE)
_DOLLY = re.compile(
    r"### Instruction:\n(?P<instruction>.*?)\n\n(?:### Input:\n(?P<context>.*?)\n\n)?### Response:",
    re.DOTALL,
)


def split_of(text: str) -> str:
    """A quarter of the rows go to held-out, by a stable hash of the message."""
    return "heldout" if hashlib.sha256(text.encode()).digest()[0] % 4 == 0 else "train"


def _row(text: str, retrieve: bool, kind: str, origin: str) -> dict:
    """One training row of an imported message, split by its hash."""
    return {
        "message": text,
        "retrieve": retrieve,
        "kind": kind,
        "split": split_of(text),
        "origin": origin,
    }


def dress(text: str, rng: random.Random) -> str:
    """CLINC queries are lowercased without punctuation: restore both, alike for each label."""
    text = text.strip()
    if rng.random() < 0.6:
        text = text[0].upper() + text[1:]
    if (
        rng.random() < 0.5
        and not text.endswith("?")
        and re.match(
            r"(?i)(who|what|when|where|which|why|how|is|are|do|does|did|can|could|will|was|have|has)\b",
            text,
        )
    ):
        text += "?"
    return text


def clinc_rows(path: Path, rng: random.Random) -> list[dict]:
    """Sampled CLINC150 queries of the intents above, labelled by intent."""
    data = json.loads(path.read_text(encoding="utf-8"))
    by_intent: dict[str, list[str]] = {}
    for part in ("train", "val", "test"):
        for text, intent in data[part]:
            by_intent.setdefault(intent, []).append(text)
    oos = [t for part in ("oos_train", "oos_val", "oos_test") for t, _ in data[part]]
    rows = []
    for intents, label in ((CLINC_RETRIEVE, True), (CLINC_SKIP, False)):
        for intent, n in intents.items():
            for text in rng.sample(sorted(set(by_intent[intent])), n):
                rows.append((dress(text, rng), label, f"clinc_{intent}"))
    general = [t for t in sorted(set(oos)) if not _PERSONAL.search(t)]
    for text in rng.sample(general, OUT_OF_SCOPE):
        rows.append((dress(text, rng), False, "clinc_oos"))
    return [_row(m, y, k, "clinc150") for m, y, k in rows]


def dolly_rows(path: Path) -> list[dict]:
    """Every instruction of the Dolly sample (with its pasted context, when it has one)."""
    rows = []
    for number, record in read_jsonl(path):
        match = _DOLLY.search(record["prompt"])
        if match is None:
            raise ValueError(f"{path}, line {number}: a row without '### Instruction:'")
        text = match["instruction"].strip()
        if match["context"]:
            text = f"{text}\n\n{match['context'].strip()[:600]}"
        rows.append(_row(text, False, "dolly", "dolly"))
    return rows


WEBQUESTIONS = 1200
ARENA_CHARS = 1500  # the embedding reads the start; the rest of a pasted file adds nothing


def arena_rows(paths: list[Path]) -> list[dict]:
    """Real Chatbot Arena prompts, the English ones: all skip."""
    rows = []
    for path in paths:
        for _, r in read_jsonl(path):
            text = r["prompt"].strip()
            if text and sum(c.isascii() for c in text) / len(text) > 0.97:
                rows.append(_row(text[:ARENA_CHARS], False, "arena", "arena_hard"))
    return rows


def webquestions_rows(paths: list[Path], rng: random.Random) -> list[dict]:
    """Questions people typed into Google (a sample): all skip."""
    seen: dict[str, str] = {}
    for path in paths:
        for q in json.loads(path.read_text(encoding="utf-8")):
            text = " ".join(q["qText"].split())
            if len(text.split()) >= 3:
                seen.setdefault(text.lower(), text)
    found = [seen[key] for key in sorted(seen)]
    return [
        _row(dress(text, rng), False, "webquestions", "webquestions")
        for text in rng.sample(found, min(WEBQUESTIONS, len(found)))
    ]


def main(argv: list[str] | None = None) -> int:
    """Replace the imported rows of the training file; print how many of each."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clinc", type=Path, help="CLINC150 data/data_full.json")
    parser.add_argument("--dolly", type=Path, help="Dolly sample (prompt/answer JSONL)")
    parser.add_argument("--arena", type=Path, nargs="+", help="arena-hard question.jsonl files")
    parser.add_argument("--webquestions", type=Path, nargs="+", help="WebQuestions main/*.json")
    args = parser.parse_args(argv)
    # Each source is seeded by its own name: importing one leaves the others' rows as they are.
    sources = {
        "clinc150": args.clinc and (lambda rng: clinc_rows(args.clinc, rng)),
        "dolly": args.dolly and (lambda rng: dolly_rows(args.dolly)),
        "arena_hard": args.arena and (lambda rng: arena_rows(args.arena)),
        "webquestions": args.webquestions
        and (lambda rng: webquestions_rows(args.webquestions, rng)),
    }
    chosen = {name: make for name, make in sources.items() if make}
    if not chosen:
        parser.error("give at least one source")
    rows = [row for _, row in read_jsonl(DATA)]
    kept = [r for r in rows if r.get("origin") not in chosen]
    seen = {r["message"].lower() for r in kept}
    imported = []
    for name, make in chosen.items():
        rng = random.Random(SEED if name == "clinc150" else f"{SEED}-{name}")
        for row in make(rng):
            if row["message"].lower() not in seen:
                seen.add(row["message"].lower())
                imported.append(row)
    with DATA.open("w", encoding="utf-8") as fh:
        for row in kept + imported:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    pos = sum(r["retrieve"] for r in imported)
    print(
        f"kept {len(kept)} rows; imported {len(imported)} "
        f"({pos} retrieve, {len(imported) - pos} skip)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
