"""Security: the key never leaks, the server stays on localhost, users stay apart."""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path

import pytest

from assistant.capture import Capturer
from assistant.config import Settings
from assistant.fake_api import Reply
from assistant.gate import LlmGate
from assistant.pipeline import Pipeline
from assistant.respond import ModelResponder
from memory.store import MemoryStore

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-ant-LEAKCHECK-7f3a9c1e5b"


def test_streamlit_binds_to_localhost_and_sends_no_usage_stats():
    # tomllib is 3.11+; the two settings are simple enough to read with a pattern.
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    server = config.split("[server]", 1)[1].split("\n[", 1)[0]
    browser = config.split("[browser]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^address\s*=\s*"(127\.0\.0\.1|localhost)"', server, re.M)
    assert re.search(r"^gatherUsageStats\s*=\s*false", browser, re.M)
    readme = (ROOT / "README.md").read_text()
    assert "--server.address 0.0.0.0" in readme  # how to expose it on purpose


def test_settings_never_print_the_key():
    settings = Settings.from_env({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://h:1"})
    assert settings.api_key == KEY
    assert KEY not in repr(settings) and KEY not in str(settings)
    assert KEY not in settings.endpoint_host


@pytest.mark.parametrize("status", [401, 403, 429, 500, 529])
def test_key_never_in_turns_logs_or_exceptions(fake_api, tmp_path, caplog, status):
    import anthropic

    caplog.set_level(logging.DEBUG)  # the SDK and httpx log requests at DEBUG
    client = anthropic.Anthropic(api_key=KEY, base_url=fake_api.url, max_retries=0)
    store = MemoryStore.persistent(tmp_path / "mem", "sec")
    pipeline = Pipeline(
        gate=LlmGate(client, "gate"),
        store=store,
        responder=ModelResponder(client, "chat"),
        capturer=Capturer(store, client, "gate"),
    )
    for _ in range(4):
        fake_api.queue(Reply(status=status))
    turn = pipeline.run("remember that my bank PIN hint is 'blue'")
    assert turn.error
    assert KEY not in repr(turn)
    assert KEY not in caplog.text
    # The SDK's own exception text does not carry it either.
    fake_api.queue(Reply(status=status))
    with pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert KEY not in str(info.value) and KEY not in repr(info.value)


def test_key_never_in_exported_memories(tmp_path, monkeypatch):
    from memory.__main__ import main as memory_cli

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    folder, exported = tmp_path / "mem", tmp_path / "export.jsonl"
    assert memory_cli(["--dir", str(folder), "--user", "sec", "seed-demo"]) == 0
    assert memory_cli(["--dir", str(folder), "--user", "sec", "add", "My PIN hint is blue."]) == 0
    assert memory_cli(["--dir", str(folder), "--user", "sec", "export", str(exported)]) == 0
    text = exported.read_text()
    assert "My PIN hint is blue." in text and len(text.splitlines()) == 61
    assert KEY not in text


def test_no_user_content_through_unsafe_allow_html():
    # Any unsafe_allow_html=True call in app.py must render a constant, never user data.
    tree = ast.parse((ROOT / "app.py").read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        unsafe = [
            k
            for k in node.keywords
            if k.arg == "unsafe_allow_html"
            and not (isinstance(k.value, ast.Constant) and k.value.value is False)
        ]
        if unsafe:
            assert node.args and all(isinstance(a, ast.Constant) for a in node.args), (
                f"app.py line {node.lineno}: unsafe_allow_html with non-constant content"
            )


def test_one_users_memories_never_reach_another(tmp_path):
    folder = tmp_path / "mem"
    alice = MemoryStore.persistent(folder, "alice")
    bob = MemoryStore.persistent(folder, "bob")
    alice.add("Alice's secret: the safe combination is 12-34-56.")
    bob.add("Bob likes jazz.")
    assert bob.search("what is the safe combination?", k=5, min_similarity=-1)
    assert all("safe combination" not in m.text for m in bob.search("safe combination", k=10))
    assert all("Alice" not in m.text for m in bob.list(limit=100))
    assert bob.count() == 1 and alice.count() == 1
