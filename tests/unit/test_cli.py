"""The `memory-gate` console script: the demo's command line, and the memory and eval commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import app_path, streamlit_command

ROOT = Path(__file__).resolve().parents[2]


def memory_gate(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the console script's code as pip installs it: `memory-gate ARGS`."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from assistant.cli import main; sys.exit(main())",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_pyproject_installs_the_script_and_the_app():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"memory-gate": "assistant.cli:main"}
    # Every module of the page at the root is installed with it, or the installed app breaks.
    page = sorted(f.stem for f in ROOT.glob("*.py"))
    assert sorted(project["tool"]["setuptools"]["py-modules"]) == page


def test_demo_runs_this_app_with_streamlit_on_this_machine_only():
    assert app_path() == ROOT / "app.py"
    assert streamlit_command(8502) == [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.address", "127.0.0.1",
        "--server.port", "8502",
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    assert streamlit_command(9000, "0.0.0.0")[5:9] == [
        "--server.address", "0.0.0.0", "--server.port", "9000"
    ]  # fmt: skip


def test_finding_the_app_imports_neither_the_app_nor_streamlit():
    probe = (
        "import sys; from assistant.cli import app_path; assert app_path().is_file(); "
        "heavy = ('app', 'streamlit', 'chromadb', 'anthropic'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_demo_help_and_a_bad_port():
    shown = memory_gate("demo", "--help")
    assert shown.returncode == 0 and "--port" in shown.stdout and "--address" in shown.stdout
    bad = memory_gate("demo", "--port", "eighty")
    assert bad.returncode == 2 and "invalid int value" in bad.stderr


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("memory", ("seed-demo", "search", "export")),
        ("eval", ("recall", "gate")),
    ],
)
def test_memory_and_eval_commands_answer_help(command, words):
    done = memory_gate(command, "--help")
    assert done.returncode == 0, done.stderr
    assert all(word in done.stdout for word in words)


def test_no_command_shows_the_three_commands():
    done = memory_gate()
    assert done.returncode == 2
    assert all(name in done.stderr for name in ("demo", "memory", "eval"))
