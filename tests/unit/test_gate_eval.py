"""`python -m assistant.eval gate`: JSON shape, breakdowns, null labels and bad input."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.eval import gate_eval

ROWS = [
    {"message": "when am I meeting Alex?", "retrieve": True, "source": "mine", "x": 1},
    {"message": "what's 2+2", "retrieve": False, "source": "math"},
    {
        "message": "What is the capital of France, and why is it Paris?",
        "retrieve": False,
        "source": "trivia",
    },
    {
        "message": "did my sister call back about the weekend plans?",
        "retrieve": True,
        "source": "mine",
    },
    {"message": "maybe", "retrieve": None, "source": "mine"},
]
KEYS = {"n", "accuracy", "precision", "recall", "f1", "p50_ms", "p95_ms", "skip_rate"}


def write(tmp_path: Path, rows: list[dict], extra: str = "") -> Path:
    path = tmp_path / "gate.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + extra, encoding="utf-8")
    return path


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    gate_eval.add_arguments(parser)
    return gate_eval.run(parser.parse_args(argv))


def test_json_shape_and_null_labels_skipped(tmp_path, capsys):
    assert run([str(write(tmp_path, ROWS)), "--gate", "always", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1  # exactly one JSON object
    result = json.loads(out[0])
    assert result.keys() >= KEYS
    assert result["n"] == 4 and result["skipped_null_labels"] == 1
    assert (result["accuracy"], result["precision"], result["recall"]) == (0.5, 0.5, 1.0)
    assert result["f1"] == pytest.approx(0.6667, abs=1e-4)
    assert result["skip_rate"] == 0.0


def test_by_source_breaks_figures_down(tmp_path, capsys):
    assert run([str(write(tmp_path, ROWS)), "--gate", "length", "--json", "--by", "source"]) == 0
    result = json.loads(capsys.readouterr().out)
    by = result["by_source"]
    assert set(by) == {"mine", "math", "trivia"}
    assert by["mine"]["n"] == 2 and by["math"].keys() >= KEYS
    # length gate: the short math question is skipped, the long trivia one is not.
    assert by["math"]["accuracy"] == 1.0 and by["trivia"]["accuracy"] == 0.0


def test_split_filter(tmp_path, capsys):
    rows = [dict(r, split="heldout" if i % 2 else "train") for i, r in enumerate(ROWS[:4])]
    assert run([str(write(tmp_path, rows)), "--gate", "never", "--json", "--split", "heldout"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 2


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("{not json\n", "line 6: not valid JSON"),
        ('{"message": 3, "retrieve": true}\n', "line 6: 'message' must be a string"),
        ('{"message": "hi"}\n', "line 6: missing 'retrieve'"),
        ('{"message": "hi", "retrieve": "yes"}\n', "line 6: 'retrieve' must be"),
        ("[1, 2]\n", "line 6: expected a JSON object"),
    ],
)
def test_malformed_line_names_its_number(tmp_path, capsys, extra, needle):
    assert run([str(write(tmp_path, ROWS, extra)), "--gate", "always", "--json"]) == 2
    captured = capsys.readouterr()
    assert needle in captured.err and captured.out == ""


@pytest.mark.parametrize("mode", ["llm", "cascade"])
def test_model_modes_need_a_key(tmp_path, capsys, mode):
    assert run([str(write(tmp_path, ROWS)), "--gate", mode, "--json"]) == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    assert run([str(tmp_path / "nope.jsonl"), "--gate", "always"]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_cli_entry_point(tmp_path):
    path = write(tmp_path, ROWS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run(
        [sys.executable, "-m", "assistant.eval", "gate", str(path), "--gate", "never", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["n"], result["recall"], result["skip_rate"]) == (4, 0.0, 1.0)


def test_human_table(tmp_path, capsys):
    assert run([str(write(tmp_path, ROWS)), "--gate", "always", "--by", "source"]) == 0
    out = capsys.readouterr().out
    assert "gate=always" in out and "trivia" in out
