"""The offline demo starts and answers its first turns in a network namespace with no network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Runs the real app.py through AppTest (no sockets needed), so the only way to the outside
# world would be the app itself: and inside `unshare -n` there is none.
SCRIPT = textwrap.dedent(
    """
    import socket, sys
    from streamlit.testing.v1 import AppTest
    from tests.chat_box import send_message
    try:
        socket.create_connection(("1.1.1.1", 443), timeout=2)
        sys.exit("network is reachable: this check proves nothing")
    except OSError:
        pass
    at = AppTest.from_file("app.py", default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    for message in ("What's 2+2?", "When am I meeting Alex?"):
        send_message(at, message)
        assert not at.exception, [e.value for e in at.exception]
    turns = [exchange.gated for exchange in at.session_state["exchanges"]]
    for turn in turns:
        print(turn.decision.label, "|", turn.reply_source, "|", turn.reply.splitlines()[0])
    """
)


def _can_unshare() -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.app  # the app under AppTest, in a child process without a network
@pytest.mark.timeout(300)
@pytest.mark.skipif(not _can_unshare(), reason="needs `unshare -n` (root or user namespaces)")
def test_offline_demo_answers_with_no_network_at_all(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN")
    }
    env.update(MEMGATE_MEMORY_DIR=str(tmp_path / "mem"), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines == [
        "skipped | offline | 2+2 = 4",
        "retrieved | offline | From your memories:",
    ]
