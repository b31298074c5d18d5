"""`memory-gate talk check`: a rehearsal through the app's own chat, on the offline setup."""

from __future__ import annotations

import json

from tests.processes import run_python


def _talk(tmp_path, *beats: dict) -> str:
    path = tmp_path / "talk.jsonl"
    path.write_text("".join(json.dumps(b) + "\n" for b in beats), encoding="utf-8")
    return str(path)


def _check(tmp_path, *args: str):
    env = {"MEMGATE_MEMORY_DIR": str(tmp_path / "mem"), "MEMGATE_LOCAL_MODEL": "off"}
    return run_python("-m", "assistant.cli", "talk", "check", *args, env=env, timeout=240)


def test_the_default_talk_gets_every_decision_it_promises(tmp_path) -> None:
    done = _check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if "/8 " in line]
    assert len(lines) == 8 and all(" expected " in line and " gate " in line for line in lines)
    # The scoreboard a presenter quotes; the talk's one compare beat measured its first token.
    assert "searches skipped: " in done.stdout
    assert "measured by compare mode over 1 exchange)" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_beat_that_would_surprise_fails_the_rehearsal_and_is_named(tmp_path) -> None:
    talk = _talk(
        tmp_path,
        {"say": "When am I meeting Alex?", "expect": "retrieve"},
        {"say": "What's 2+2?", "expect": "retrieve"},  # the slides are wrong here
        {"say": "What time?", "expect": "retrieve"},
    )
    done = _check(tmp_path, talk)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2/3 SURPRISE" in done.stdout
    assert "1 of 3 beats would surprise: 2 (line 2, expected retrieve)" in done.stdout


def test_a_malformed_talk_plays_nothing_and_says_where_it_is_wrong(tmp_path) -> None:
    talk = tmp_path / "talk.jsonl"
    talk.write_text('{"say": "What\'s 2+2?"}\n{"say": "hi", "expect": "maybe"}\n')
    done = _check(tmp_path, str(talk))
    assert done.returncode == 2
    assert f"{talk}, line 2" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == "" and not (tmp_path / "mem").exists()  # nothing was played
