"""A short bounded load run: concurrent sessions, zero errors, and it stops by itself."""

from __future__ import annotations

import pytest

from assistant.eval.load import run_load


@pytest.mark.chroma  # sessions share a real store
@pytest.mark.timeout(180)
def test_concurrent_offline_sessions_run_without_errors():
    # 1.5 s: every session starts well before the deadline and finishes at least one turn
    # (the four threads run 150-300 turns side by side); a longer run checks nothing more.
    result = run_load(sessions=4, seconds=1.5)
    assert result.errors == 0, result.first_error
    assert result.turns >= 4
    assert result.seconds < 60  # it stopped by itself
