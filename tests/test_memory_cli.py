"""`python -m memory`: every command, the lossless export/import round trip, bad imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.__main__ import main
from memory.persona import persona

ROOT = Path(__file__).resolve().parents[1]


def cli(capsys: pytest.CaptureFixture[str], folder: Path, *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process against `folder` for user 'cli'."""
    code = main(["--dir", str(folder), "--user", "cli", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_help_lists_every_command():
    result = subprocess.run(
        [sys.executable, "-m", "memory", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    for command in ("add", "search", "list", "delete", "seed-demo", "import", "export"):
        assert command in result.stdout
    assert "MEMGATE_MEMORY_DIR" in result.stdout and "--dir" in result.stdout


def test_add_search_list_delete(tmp_path: Path, capsys):
    code, out, _ = cli(
        capsys,
        tmp_path,
        "add",
        "Alex's dinner is Thursday 7:30pm at Nopa",
        "--meta",
        "topic=plans",
        "--meta",
        "n=2",
    )
    assert code == 0 and out.startswith("added ")
    mid = out.split()[-1]
    code, out, _ = cli(capsys, tmp_path, "add", "Alex's dinner is Thursday 7:30pm at Nopa.")
    assert out == f"updated {mid}\n"
    code, out, _ = cli(capsys, tmp_path, "search", "when am I seeing Alex?", "--json")
    hit = json.loads(out.splitlines()[0])
    assert hit["id"] == mid and hit["metadata"] == {"topic": "plans", "n": 2}
    assert hit["similarity"] > 0
    code, out, _ = cli(capsys, tmp_path, "list", "--json")
    assert [json.loads(line)["id"] for line in out.splitlines()] == [mid]
    code, out, _ = cli(capsys, tmp_path, "count")
    assert out.strip() == "1"
    code, out, err = cli(capsys, tmp_path, "delete", mid, "missing-id")
    assert code == 1 and "deleted 1" in out and "missing-id" in err
    code, out, _ = cli(capsys, tmp_path, "count")
    assert out.strip() == "0"


def test_add_empty_text_is_a_clear_error(tmp_path: Path, capsys):
    code, _, err = cli(capsys, tmp_path, "add", "   ")
    assert code == 1 and "empty" in err


def test_seed_demo_twice_changes_nothing(tmp_path: Path, capsys):
    code, out, _ = cli(capsys, tmp_path, "seed-demo")
    assert code == 0 and f"added {len(persona())}" in out
    code, out, _ = cli(capsys, tmp_path, "seed-demo")
    assert out.startswith("added 0 ")


def test_export_then_import_into_an_empty_store_is_lossless(tmp_path: Path, capsys):
    src, dst = tmp_path / "src", tmp_path / "dst"
    cli(capsys, src, "seed-demo")
    cli(
        capsys,
        src,
        "add",
        "Captured: I switched to decaf",
        "--source",
        "captured",
        "--meta",
        "confidence=0.8",
        "--meta",
        "pinned=true",
    )
    first = tmp_path / "first.jsonl"
    assert cli(capsys, src, "export", str(first))[0] == 0
    code, out, _ = cli(capsys, dst, "import", str(first))
    assert code == 0 and out.startswith(f"imported {len(persona()) + 1}")
    second = tmp_path / "second.jsonl"
    cli(capsys, dst, "export", str(second))
    assert first.read_text() == second.read_text()
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    decaf = next(r for r in rows if "decaf" in r["text"])
    assert decaf["source"] == "captured"
    assert decaf["metadata"] == {"confidence": 0.8, "pinned": True}
    assert set(decaf) == {"id", "text", "created_at", "source", "metadata"}
    # Importing again skips what is already there.
    code, out, _ = cli(capsys, dst, "import", str(first))
    assert out.startswith("imported 0")


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "line 2"),
        ('{"id": "x"}', "line 2"),
        ('{"text": "ok", "metadata": {"a": [1]}}', "line 2"),
        ('{"text": "ok", "source": "guessed"}', "line 2"),
        ('["a", "list"]', "line 2"),
    ],
)
def test_malformed_import_line_reports_the_line_and_imports_nothing(
    tmp_path: Path, capsys, bad_line: str, message: str
):
    path = tmp_path / "in.jsonl"
    path.write_text(
        '{"id": "a", "text": "a fine memory"}\n' + bad_line + "\n"
        '{"id": "c", "text": "another fine memory"}\n'
    )
    code, out, err = cli(capsys, tmp_path / "mem", "import", str(path))
    assert code == 1 and message in err
    assert cli(capsys, tmp_path / "mem", "count")[1].strip() == "0"


def test_clear_needs_yes(tmp_path: Path, capsys):
    cli(capsys, tmp_path, "add", "something to forget")
    assert cli(capsys, tmp_path, "clear")[0] == 2
    assert cli(capsys, tmp_path, "clear", "--yes")[1] == "deleted 1\n"


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("zip=02139", "02139"),  # a leading zero is text: storing 2139 would lose it
        ("price=1.50", "1.50"),
        ("big=1e3", "1e3"),
        ("plus=+5", "+5"),
        ("word=nan", "nan"),
        ("n=42", 42),
        ("neg=-7", -7),
        ("x=2.5", 2.5),
        ("ok=true", True),
        ("no=False", False),
    ],
)
def test_meta_values_become_numbers_only_when_they_round_trip(tmp_path, capsys, raw, stored):
    code, out, _ = cli(capsys, tmp_path, "add", "A memory with one metadata value", "--meta", raw)
    assert code == 0
    code, out, _ = cli(capsys, tmp_path, "list", "--json")
    key = raw.partition("=")[0]
    value = json.loads(out.splitlines()[0])["metadata"][key]
    assert value == stored and type(value) is type(stored)


_HOLDER = """
import sys, time
from memory.store import MemoryStore
store = MemoryStore.persistent(sys.argv[1], "cli")
store.add("Held by the running app: the spare key is in the shed")
print("open", flush=True)
sys.stdin.readline()
"""


def test_cli_refuses_a_folder_another_process_has_open(tmp_path, capsys):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    app = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert app.stdout.readline().strip() == "open"
        code, out, err = cli(capsys, tmp_path, "add", "A write while the app runs")
        assert code == 1 and out == ""
        assert "open in another process" in err and f"pid {app.pid}" in err
        assert "chroma run --path" in err
    finally:
        app.communicate("\n", timeout=60)
    # Once the app has stopped, the CLI works, and the app's memory is intact.
    code, out, _ = cli(capsys, tmp_path, "list", "--json")
    assert code == 0
    assert [json.loads(line)["text"] for line in out.splitlines()] == [
        "Held by the running app: the spare key is in the shed"
    ]
