"""Write a public general-question set for `memory-gate eval answers` from GSM8K.

    python training/import_answers.py --gsm8k grade_school_math/data/test.jsonl

GSM8K (`openai/grade-school-math`, MIT): grade-school maths word problems written by
people, each with a worked solution ending in `#### <number>`. We keep problems whose
solution takes at most two calculation steps, so that a reply can reach the answer within
an evaluation's bounded reply length, and draw a seeded sample of them. The gold answer
is the final number, and a reply is scored on the last number it writes (as GSM8K's own
evaluations do), not on any number it contains. Source, commit, path,
licence and the file's sha256: `training/data/README.md` and `NOTICE`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from memory.jsonl import read_jsonl

ANSWERS = Path(__file__).resolve().parents[1] / "evaluation" / "answers"
OUT = ANSWERS / "gsm8k_general_questions.jsonl"
SEED = 20261219
SIZE = 60
MAX_STEPS = 2


def gold(answer_text: str) -> str:
    """The final number of a GSM8K solution (the text after '####'), commas dropped."""
    return answer_text.rsplit("####", 1)[1].strip().replace(",", "")


def steps(answer_text: str) -> int:
    """How many calculations a solution makes: its <<a=b>> annotations."""
    return len(re.findall(r"<<[^>]*>>", answer_text))


def gsm8k_rows(path: Path, size: int = SIZE, seed: int = SEED) -> list[dict]:
    """A seeded sample of the short problems, in the answers-set format."""
    pool = [
        (n, row)
        for n, row in read_jsonl(path)
        if 1 <= steps(row["answer"]) <= MAX_STEPS
        and re.fullmatch(r"-?\d+(\.\d+)?", gold(row["answer"]))
    ]
    picked = sorted(random.Random(seed).sample(pool, size), key=lambda item: item[0])
    return [
        {
            "question": row["question"],
            "answers": [gold(row["answer"])],
            "needs_memory": False,
            "kind": "gsm8k",
            # A worked reply repeats the problem's numbers: the answer is its last number.
            "match": "last_number",
            "source": f"gsm8k/test.jsonl:{n}",
        }
        for n, row in picked
    ]


def main(argv: list[str] | None = None) -> int:
    """Read GSM8K's test file and write the sample."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gsm8k", type=Path, required=True, help="GSM8K's test.jsonl")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows = gsm8k_rows(args.gsm8k)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
