"""`python -m bench <command>`: one entry point, one module imported per command."""

from __future__ import annotations

import sys

import pytest

import bench.__main__ as cli
import bench.report
from bench import COMMANDS


def test_the_help_lists_every_command_and_imports_none_of_them(capsys):
    before = set(sys.modules)
    with pytest.raises(SystemExit) as exited:
        cli.main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert all(name in shown for name in COMMANDS)
    loaded = {m for m in set(sys.modules) - before if m.startswith("bench.")}
    assert loaded == set()


@pytest.mark.parametrize("argv", [[], ["--quick"], ["--quick", "--only", "memory"]])
def test_no_command_runs_every_section_as_make_bench_does(monkeypatch, argv):
    seen = []
    monkeypatch.setattr(bench.report, "command", lambda args: seen.append(args) or 0)
    assert cli.main(argv) == 0
    assert seen[0].command == "all" and seen[0].quick is ("--quick" in argv)


def test_every_report_section_is_a_command_and_only_sections_can_be_chosen(capsys):
    assert {name for _, name, _ in bench.report.SECTIONS} <= set(COMMANDS)
    with pytest.raises(SystemExit):  # not a section: no report of nothing over the real one
        cli.main(["--only", "merge"])
    assert "invalid choice: 'merge'" in capsys.readouterr().err


@pytest.mark.chroma  # some commands' modules load the store or the browser driver
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_takes_its_options(name, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main([name, "--help"])
    assert exited.value.code == 0
    assert f"python -m bench {name}" in capsys.readouterr().out
