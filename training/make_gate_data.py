"""Write the template-expanded part of the local gate's training data, reproducibly.

    python training/make_gate_data.py [--eval-dir ../shared/eval]
                                      # rewrites the origin=template rows of gate_train.jsonl

The other rows of the training file (hand-written, and imported by
`training/import_real.py`) are kept; this script drops the rows it wrote before
(`"origin": "template"`) and appends new ones from `training/gate_templates.json`.
Any row, of any origin, within MiniLM cosine 0.88 of a message of our fresh test sets or
of the external gate sets (when `--eval-dir` has them) is dropped.
Templates are expanded with a seeded RNG and varied in casing, punctuation and typos the
same way for both labels, so those surface cues carry no label.

Split: a whole template goes to `heldout` (about one in five, by a stable hash of its
text) or to `train`, so the held-out split measures templates the model never saw,
not new slot fillers in familiar sentences.
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
DATA_DIR = Path(__file__).resolve().parent / "data"
DATA = DATA_DIR / "gate_train.jsonl"
TEMPLATES_PATH = Path(__file__).resolve().parent / "gate_templates.json"
SEED = 20241129
HELDOUT_SHARE = 5  # one template in five
# The unseen test sets: training rows too close to any of them are dropped.
FRESH = sorted(DATA_DIR.glob("gate_fresh*_test.jsonl"))
ANSWER_SETS = sorted((ROOT / "evaluation" / "answers").glob("*_questions.jsonl"))
CORRECTION_SETS = sorted((DATA_DIR / "corrections").glob("*.jsonl"))
NEAR_DUPLICATE = 0.88  # cosine at or above which a generated row counts as a copy

SPEC = json.loads(TEMPLATES_PATH.read_text(encoding="utf-8"))
SLOTS: dict[str, list] = SPEC["slots"]
CODES = [p for p in SLOTS["PASTES"] if "def " in p or "SELECT" in p or "range(" in p]
PAST_TENSE: dict[str, str] = SPEC["past_tense"]
FILLERS: list[str] = SPEC["fillers"]


def past(act: str) -> str:
    """'go to the gym' -> 'went to the gym' (only the verbs our lists use)."""
    verb, _, rest = act.partition(" ")
    return f"{PAST_TENSE.get(verb, verb + 'ed')} {rest}".strip()


def fill(pattern: str, rng: random.Random) -> str:
    """One expansion of a template."""
    s = SLOTS
    cat = rng.choice(s["CATS"])
    n, m = rng.sample(s["NAMES"], 2)
    act = rng.choice(s["PAST_ACTS"])
    c1, c2 = rng.sample(s["CONCEPTS"], 2)
    # The draws happen in this order whatever the pattern uses: the output must stay the
    # same for a given seed.
    values = {
        "N": n,
        "M": m,
        "ACT": act,
        "ACT_PAST": past(act),
        "LIKE": rng.choice(s["LIKES"]),
        "C": cat[0],
        "CP": cat[1],
        "TOPIC": rng.choice(s["TOPICS"]),
        "JOINT": rng.choice(s["JOINT"]),
        "HYPO": rng.choice(s["HYPOS"]),
        "MY": rng.choice(s["MY_THINGS"]),
        "R": rng.choice(s["REL"]),
        "WHEN": rng.choice(s["WHENS"]),
        "EV": rng.choice(s["EVENTS"]),
        "DAY": rng.choice(s["DAYS"]),
        "DAY_BARE": rng.choice(s["DAYS"]).replace("on ", ""),
        "F": rng.choice(s["FEELINGS"]),
        "FAM": rng.choice(s["FAMOUS"]),
        "FIC": rng.choice(s["FICTIONAL"]),
        "BOOK": rng.choice(s["BOOKS"]),
        "FILM": rng.choice(s["FILMS"]),
        "HIST": rng.choice(s["HIST"]),
        "LAND": rng.choice(s["LANDMARKS"]),
        "COUNTRY": rng.choice(s["COUNTRIES"]),
        "SPORT": rng.choice(s["SPORTS_EVENTS"]),
        "YEAR": str(rng.randint(1966, 2022)),
        "EL": rng.choice(s["ELEMENTS"]),
        "INV": rng.choice(s["INVENTIONS"]),
        "SONG": rng.choice(s["SONGS"]),
        "CONCEPT": c1,
        "CONCEPT2": c2,
        "YA": rng.choice(s["YOU_ADJ"]),
        "BV": rng.choice(s["BOT_VERBS"]),
        "BR": rng.choice(s["BOT_ROLES"]),
        "A": str(rng.randint(3, 60)),
        "B": str(rng.randint(2, 40)),
        "S": str(rng.randint(2, 9)),
        "BIG": str(rng.randint(8, 90) * 10),
        "BIG2": str(rng.randint(30, 90)),
        "PCT": str(rng.choice([10, 15, 20, 25, 30, 40, 50])),
        "INSTR": rng.choice(s["INSTR"]),
        "PASTE": rng.choice(s["PASTES"]),
        "FORM": rng.choice(s["WRITE_FORMS"]),
        "WT": rng.choice(s["WRITE_TOPICS"]),
        "HOW": rng.choice(s["HOWTOS"]),
        "CODE": rng.choice(CODES),
    }
    return re.sub(r"\{([A-Z_0-9]+)\}", lambda mt: values[mt.group(1)], pattern)


def vary(text: str, rng: random.Random, pasted: bool) -> str:
    """Casing, punctuation, filler and typo noise, applied alike to both labels."""
    if pasted:
        return text
    r = rng.random()
    if r < 0.15:
        text = text.lower()
    elif r < 0.22 and len(text) > 1:
        text = text[0].lower() + text[1:]
    if rng.random() < 0.18:
        text = text.rstrip("?.!")
    if rng.random() < 0.06:
        text = rng.choice(FILLERS) + text[0].lower() + text[1:]
    if rng.random() < 0.05:
        words = text.split(" ")
        i = rng.randrange(len(words))
        w = words[i]
        if len(w) > 4 and w.isalpha():
            j = rng.randrange(1, len(w) - 2)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
            text = " ".join(words)
    if rng.random() < 0.03:
        text = text + "??"
    return text


def split_of(pattern: str) -> str:
    """A whole template (or message) goes to held-out or train by a stable hash."""
    digest = hashlib.sha256(pattern.encode()).digest()
    return "heldout" if digest[0] % HELDOUT_SHARE == 0 else "train"


def generate(hand_written: set[str]) -> list[dict]:
    """All template rows, de-duplicated against each other and the hand-written rows."""
    rng = random.Random(SEED)
    seen = {m.lower() for m in hand_written}
    rows = []
    for template in SPEC["templates"]:
        kind, label, count, pattern = (
            template[k] for k in ("kind", "retrieve", "count", "pattern")
        )
        made = tries = 0
        while made < count and tries < count * 20:
            tries += 1
            text = vary(fill(pattern, rng), rng, kind in ("pasted", "mine_sc"))
            if text.lower() in seen:
                continue
            seen.add(text.lower())
            made += 1
            rows.append(
                {
                    "message": text,
                    "retrieve": label,
                    "kind": kind,
                    "split": split_of(pattern),
                    "origin": "template",
                }
            )
    return rows


def list_rows() -> list[dict]:
    """The whole messages of the template file, each on its own stable split."""
    return [
        {
            "message": text,
            "retrieve": group["retrieve"],
            "kind": group["kind"],
            "split": split_of(text),
            "origin": "template",
        }
        for group in SPEC["messages"]
        for text in group["lines"]
    ]


def reference_messages(eval_dir: Path) -> list[str]:
    """Every message of our test sets (gate, answers, corrections) and the external gate sets."""
    paths = [*FRESH, *CORRECTION_SETS, *sorted(eval_dir.glob("gate_external*.jsonl"))]
    messages = [row["message"] for path in paths for _, row in read_jsonl(path)]
    # The answer sets' questions are asked through the gate too, so a retrained gate must
    # not have seen them either.
    messages += [row["question"] for path in ANSWER_SETS for _, row in read_jsonl(path)]
    return messages


def decontaminate(
    groups: list[list[dict]], references: list[str], threshold: float = NEAR_DUPLICATE
) -> list[list[dict]]:
    """Each group of rows without its near-duplicates (MiniLM cosine) of any evaluation message.

    Evaluation sets are only ever used here to REMOVE training rows, so that they stay
    tests of messages unlike anything trained on. Hand-written and imported rows are
    checked too: a common phrase ("who wrote hamlet") can be written independently by
    both sides. The references are embedded once; each group is embedded as its own
    batch, because the batch's padding moves cosines in the third decimal and the output
    must not depend on how groups are mixed.
    """
    sys.path.insert(0, str(ROOT))
    from memory.embeddings import shared_model

    model = shared_model()
    reference_vectors = model.encode(references).T
    cleaned = []
    for rows in groups:
        best = (model.encode([r["message"] for r in rows]) @ reference_vectors).max(axis=1)
        cleaned.append([r for r, s in zip(rows, best, strict=True) if s < threshold])
    return cleaned


def main(argv: list[str] | None = None) -> int:
    """Regenerate the template rows and decontaminate the whole training file."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=ROOT.parent / "shared" / "eval",
        help="where gate_external*.jsonl live, to decontaminate against (skipped if absent)",
    )
    args = parser.parse_args(argv)
    references = reference_messages(args.eval_dir)
    hand = [row for _, row in read_jsonl(DATA) if row.get("origin") != "template"]
    made = generate({row["message"] for row in hand})
    known = {row["message"].lower() for row in hand + made}
    made += [row for row in list_rows() if row["message"].lower() not in known]
    kept, rows = decontaminate([hand, made], references)
    print(
        f"checked against {len(references)} evaluation messages: dropped "
        f"{len(hand) - len(kept)} hand-written or imported and {len(made) - len(rows)} "
        "template rows"
    )
    with DATA.open("w", encoding="utf-8") as fh:
        for row in kept + rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    pos = sum(r["retrieve"] for r in rows)
    print(f"kept {len(kept)} other rows; wrote {len(rows)} template rows ({pos} retrieve)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
