"""`memory-gate memory corrections`: list, export, import, delete, end to end on a real folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.gates.corrections.cli import main
from assistant.gates.labels import read_rows

pytestmark = pytest.mark.chroma  # every command opens a real store (as in test_memory_cli)


def cli(capsys: pytest.CaptureFixture[str], folder: Path, *args: str) -> tuple[int, str, str]:
    """Run `corrections ...` in-process against `folder` for user 'cli'."""
    code = main(["--dir", str(folder), "--user", "cli", "corrections", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROWS = [
    {"message": "What breed is Mango?", "retrieve": True, "gate": "local", "reason": "general"},
    {"message": "Remind me how compound interest works", "retrieve": False},
    {"message": "no label on this one", "retrieve": None},
]


def test_import_list_export_delete_round_trip(tmp_path, capsys):
    source = _write(tmp_path / "in.jsonl", ROWS)
    code, out, _ = cli(capsys, tmp_path / "mem", "import", str(source))
    assert code == 0 and out == "imported 2 corrections (1 unlabelled rows skipped)\n"

    code, out, _ = cli(capsys, tmp_path / "mem", "list", "--json")
    listed = [json.loads(line) for line in out.splitlines()]
    assert sorted((r["message"], r["retrieve"]) for r in listed) == sorted(
        (r["message"], r["retrieve"]) for r in ROWS[:2]
    )
    assert next(r for r in listed if r["retrieve"])["gate"] == "local"
    code, out, _ = cli(capsys, tmp_path / "mem", "list")
    assert "search memory" in out and "no memory" in out and "What breed is Mango?" in out

    # The export is labelled data the gate evaluation reads as it reads our test sets.
    code, _, err = cli(capsys, tmp_path / "mem", "export", str(tmp_path / "out.jsonl"))
    assert code == 0 and "exported 2 corrections" in err
    rows, skipped = read_rows(tmp_path / "out.jsonl")
    assert skipped == 0 and {(r.message, r.retrieve) for r in rows} == {
        (r["message"], r["retrieve"]) for r in ROWS[:2]
    }
    assert all(r.fields["kind"] == "correction" for r in rows)

    # Importing the export into another folder gives the same corrections, times kept.
    code, out, _ = cli(capsys, tmp_path / "other", "import", str(tmp_path / "out.jsonl"))
    assert code == 0 and out == "imported 2 corrections\n"
    code, out, _ = cli(capsys, tmp_path / "other", "list", "--json")
    assert sorted(json.loads(line)["created_at"] for line in out.splitlines()) == sorted(
        r.fields["created_at"] for r in rows
    )

    target = next(r for r in listed if r["retrieve"])["id"]
    code, out, _ = cli(capsys, tmp_path / "mem", "delete", target)
    assert code == 0 and out == "deleted 1\n"
    code, out, err = cli(capsys, tmp_path / "mem", "delete", target)
    assert code == 1 and f"no correction with id {target}" in err
    code, out, _ = cli(capsys, tmp_path / "mem", "list", "--json")
    assert [json.loads(line)["message"] for line in out.splitlines()] == [ROWS[1]["message"]]


@pytest.mark.parametrize(
    "bad",
    [
        {"message": "fine", "retrieve": "yes"},
        {"message": "   ", "retrieve": True},
        {"message": "fine", "retrieve": True, "created_at": "last tuesday"},
        {"text": "no message field", "retrieve": True},
    ],
)
def test_a_bad_row_imports_nothing(tmp_path, capsys, bad):
    source = _write(tmp_path / "in.jsonl", [ROWS[0], bad])
    code, _, err = cli(capsys, tmp_path / "mem", "import", str(source))
    assert code == 1 and err.startswith("error: ") and "nothing was imported" in err
    code, out, _ = cli(capsys, tmp_path / "mem", "list")
    assert out == ""


def test_export_refuses_to_replace_a_file_without_force(tmp_path, capsys):
    cli(capsys, tmp_path / "mem", "import", str(_write(tmp_path / "in.jsonl", ROWS[:1])))
    (tmp_path / "out.jsonl").write_text("keep me\n")
    code, _, err = cli(capsys, tmp_path / "mem", "export", str(tmp_path / "out.jsonl"))
    assert code == 1 and "--force" in err
    assert (tmp_path / "out.jsonl").read_text() == "keep me\n"
    code, _, _ = cli(capsys, tmp_path / "mem", "export", str(tmp_path / "out.jsonl"), "--force")
    assert code == 0 and len((tmp_path / "out.jsonl").read_text().splitlines()) == 1


def _memory(folder: Path, user: str, *args: str) -> int:
    return main(["--dir", str(folder), "--user", user, *args])


def test_reset_demo_restores_the_persona_exactly_and_forgets_corrections_unless_kept(
    tmp_path, capsys
):
    from memory.persona import persona
    from memory.settings import StoreSettings

    folder = tmp_path / "mem"
    assert _memory(folder, "demo", "seed-demo") == 0
    assert _memory(folder, "demo", "add", "I just adopted a kitten called Pixel") == 0
    assert _memory(folder, "demo", "delete", "persona-01") == 0  # a rehearsal's edit
    _write(tmp_path / "c.jsonl", ROWS)
    assert _memory(folder, "demo", "corrections", "import", str(tmp_path / "c.jsonl")) == 0
    capsys.readouterr()

    assert _memory(folder, "demo", "reset-demo", "--keep-corrections") == 0
    assert "kept the corrections" in capsys.readouterr().out
    store = StoreSettings(memory_dir=folder, user_id="demo").open()
    try:
        texts = sorted(m.text for m in store.list(limit=500))
        assert texts == sorted(row["text"] for row in persona())  # the kitten is gone
    finally:
        store.close()
    assert _memory(folder, "demo", "corrections", "list", "--json") == 0
    assert len(capsys.readouterr().out.splitlines()) == 2

    assert _memory(folder, "demo", "reset-demo") == 0
    assert "forgot 2 corrections" in capsys.readouterr().out
    assert _memory(folder, "demo", "corrections", "list", "--json") == 0
    assert capsys.readouterr().out == ""


def test_reset_demo_is_refused_on_another_users_store_and_changes_nothing(tmp_path, capsys):
    folder = tmp_path / "mem"
    assert _memory(folder, "ana", "add", "My passport expires in May") == 0
    capsys.readouterr()
    assert _memory(folder, "ana", "reset-demo") == 1
    err = capsys.readouterr().err
    assert "'ana'" in err and "nothing was changed" in err and "Traceback" not in err
    assert _memory(folder, "ana", "count") == 0
    assert capsys.readouterr().out.strip() == "1"
