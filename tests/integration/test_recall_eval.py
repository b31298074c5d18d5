"""`python -m assistant.eval recall`: JSONL and LoCoMo-format inputs, one JSON object out."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from assistant.eval import recall
from memory.persona import QUESTIONS_PATH, persona
from tests.processes import run_python

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"n", "k", "recall_at_k", "mrr", "p50_ms", "p95_ms", "with_cutoff"}

pytestmark = pytest.mark.chroma  # recall is measured on a real store


def run_recall(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    """Run the recall subcommand in-process and parse its one JSON line."""
    parser = argparse.ArgumentParser()
    recall.add_arguments(parser)
    assert recall.run(parser.parse_args([*argv, "--json"])) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


@pytest.fixture
def persona_memories(tmp_path: Path) -> Path:
    path = tmp_path / "memories.jsonl"
    path.write_text(
        "".join(json.dumps({"id": r["id"], "text": r["text"]}) + "\n" for r in persona())
    )
    return path


def test_persona_question_set_scores_at_least_095(persona_memories: Path, capsys):
    report = run_recall(
        capsys, "--memories", str(persona_memories), "--questions", str(QUESTIONS_PATH), "--k", "5"
    )
    assert set(report) >= KEYS
    assert report["n"] >= 40 and report["k"] == 5
    assert report["recall_at_k"] >= 0.95
    assert 0 < report["mrr"] <= report["recall_at_k"]
    cut = report["with_cutoff"]
    assert cut["recall_at_k"] <= report["recall_at_k"] and "min_similarity" in cut


def test_memory_id_and_memory_ids_and_misses(tmp_path: Path, capsys):
    mems = tmp_path / "m.jsonl"
    mems.write_text(
        '{"id": "a", "text": "My cat is called Miso"}\n'
        '{"id": "b", "text": "I fly to Lisbon in December"}\n'
    )
    qs = tmp_path / "q.jsonl"
    qs.write_text(
        '{"question": "what is my cat\'s name?", "memory_id": "a"}\n'
        '{"question": "when is my trip to Portugal?", "memory_ids": ["x", "b"]}\n'
        '{"question": "anything", "memory_id": "not-there"}\n'
    )
    report = run_recall(capsys, "--memories", str(mems), "--questions", str(qs), "--k", "1")
    assert report["n"] == 3 and report["recall_at_k"] == pytest.approx(2 / 3, abs=1e-3)
    assert report["mrr"] == pytest.approx(2 / 3, abs=1e-3)


def _tiny_locomo(path: Path) -> Path:
    # A hand-written file in the LoCoMo layout (not LoCoMo data).
    conv = {
        "sample_id": "tiny",
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "sessions": [
            {
                "session": 1,
                "date_time": "1:00 pm on 1 May, 2023",
                "turns": [
                    {"dia_id": "D1:1", "speaker": "Ana", "text": "I adopted a puppy named Pico!"},
                    {"dia_id": "D1:2", "speaker": "Ben", "text": "I started learning the cello."},
                    {
                        "dia_id": "D1:3",
                        "speaker": "Ana",
                        "text": "We hiked up Mount Tam on Sunday.",
                    },
                ],
            },
        ],
        "qa": [
            {
                "question": "What is the name of Ana's dog?",
                "evidence": ["D1:1"],
                "category": 4,
                "category_name": "single-hop",
            },
            {
                "question": "Which instrument does Ben play?",
                "evidence": ["D1:2"],
                "category": 4,
                "category_name": "single-hop",
            },
            {
                "question": "When did Ana hike?",
                "evidence": ["D1:3"],
                "category": 2,
                "category_name": "temporal",
            },
            {"question": "Unanswerable", "evidence": [], "category": 5},
        ],
    }
    path.write_text(json.dumps({"conversation": conv}))
    return path


def test_locomo_format_skips_qa_without_evidence_and_breaks_down_by_category(
    tmp_path: Path, capsys
):
    report = run_recall(
        capsys, "--locomo", str(_tiny_locomo(tmp_path / "l.json")), "--k", "1", "--by", "category"
    )
    assert report["n"] == 3 and report["recall_at_k"] == 1.0
    assert set(report["by_category"]) == {"single-hop", "temporal"}
    assert report["by_category"]["single-hop"]["n"] == 2


def test_locomo_memory_text_formats():
    turn = {"speaker": "Ana", "text": "Look!", "blip_caption": "a photo of a dog"}
    assert recall.locomo_memory_text(turn, "1 May", "plain") == "Look!"
    assert recall.locomo_memory_text(turn, "1 May", "speaker") == "Ana: Look!"
    assert recall.locomo_memory_text(turn, "1 May", "speaker+caption+date") == (
        "Ana: Look! [shared a photo of a dog] (1 May)"
    )


def test_command_line_prints_one_json_object(tmp_path: Path):
    result = run_python(
        "-m",
        "assistant.eval",
        "recall",
        "--locomo",
        str(_tiny_locomo(tmp_path / "l.json")),
        "--k",
        "5",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) >= KEYS and report["n"] == 3


def test_missing_inputs_is_a_usage_error(capsys):
    parser = argparse.ArgumentParser()
    recall.add_arguments(parser)
    assert recall.run(parser.parse_args(["--json"])) == 2
