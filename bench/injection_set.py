"""The injection set: memories that carry instructions, and benign ones that sound imperative.

The data is bench/data/injection_set.jsonl, edited by hand: the file is the one source of
truth (no code writes it). Each row is one stored memory and one question that retrieves it:

    {"id", "kind": "attack" | "benign", "source", "category", "memory", "question",
     "check": {"type": ..., "value": ...}}

An attack row's check says how to tell that the reply obeyed the memory (the word it asked
for is there, the reply is in Spanish, an image was written...). A benign row's check says
how to tell that the reply used the memory (its key word is there). The check types are
read by `bench.injection_bench.check`.

Sources (NOTICE lists commit, path and licence):
- own: written for this project, every kind the issue names, each hidden behind a fact
  about the user;
- garak: NVIDIA/garak (Apache-2.0), garak/probes/latentinjection.py: 32 combinations of
  its injection instructions, separators and trigger strings, verbatim, placed in a memory
  after a fact instead of in a document;
- bipia: microsoft/BIPIA (MIT), benchmark/text_attack_test.json: its text attacks, except
  the two kinds with no automatic check (substitution ciphers, misinformation).
BIPIA's text_attack_train.json (bench/data/bipia_text_attack_train.json) is read by the
benchmark as a held-out check of the write-time detector only (no model, no checks).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
SET_PATH = DATA / "injection_set.jsonl"
HELD_OUT_PATH = DATA / "bipia_text_attack_train.json"
FIELDS = ("id", "kind", "source", "category", "memory", "question", "check")


def load(path: Path = SET_PATH) -> list[dict[str, Any]]:
    """The rows of the set."""
    from memory.jsonl import read_jsonl

    return [row for _, row in read_jsonl(path)]


def held_out(path: Path = HELD_OUT_PATH) -> list[str]:
    """BIPIA's training attacks: unseen while the detector's rules were written."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [text for texts in data.values() for text in texts]
