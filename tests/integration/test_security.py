"""Security: the key never leaks, the server stays on localhost, users stay apart."""

from __future__ import annotations

import ast
import json
import logging
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from assistant.config import Settings
from assistant.gates.llm import LlmGate
from assistant.reply.capture import Capturer
from assistant.reply.respond import ModelResponder
from assistant.runtime.fake_api import Recorded, Reply
from assistant.turn.chat import Chat
from assistant.turn.pipeline import Pipeline
from memory.store import MemoryStore
from tests.chat_box import send_message

ROOT = Path(__file__).resolve().parents[2]
SECRET_PART = "LEAKCHECK7f3a9c1e5b"  # letters only: markdown escaping cannot hide them
KEY = f"sk-ant-{SECRET_PART}"


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


# What a careless gateway does: repeat the rejected credential in its error message. The
# SDK puts that message into its exception text, so from here on the key is one str(exc)
# away from the page, the logs and the exports.
def _echo_the_key(request: Recorded) -> Reply:
    headers = {name.lower(): value for name, value in request.headers.items()}
    sent = headers.get("x-api-key") or headers.get("authorization", "")
    error = {"type": "authentication_error", "message": f"invalid x-api-key: {sent}"}
    return Reply(status=401, raw_body=json.dumps({"type": "error", "error": error}).encode())


def _shown(text: str) -> bool:
    """True when the key's letters appear, escaped for markdown or not."""
    return SECRET_PART in text or SECRET_PART in text.replace("\\", "")


@pytest.fixture
def echoing_api(fake_api):
    fake_api.script = _echo_the_key
    return fake_api


def test_a_key_echoed_by_the_endpoint_is_really_on_the_path(echoing_api):
    import anthropic

    client = anthropic.Anthropic(api_key=KEY, base_url=echoing_api.url, max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as info:
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert _shown(str(info.value))  # the checks below would catch a leak


def test_echoed_key_reaches_no_turn_log_or_export(echoing_api, tmp_path, caplog, monkeypatch):
    import anthropic

    from memory.__main__ import main as memory_cli

    caplog.set_level(logging.DEBUG)  # the SDK and httpx log requests at DEBUG
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    client = anthropic.Anthropic(api_key=KEY, base_url=echoing_api.url, max_retries=0)
    store = MemoryStore.persistent(tmp_path / "mem", "sec")
    pipeline = Pipeline(
        gate=LlmGate(client, "gate"),
        store=store,
        responder=ModelResponder(client, "chat"),
        capturer=Capturer(store, client, "gate"),
    )
    turn = Chat.fixed(pipeline).answer("remember that my bank PIN hint is 'blue'").gated
    # Every model call failed on the echoing 401: gate, reply and capture all said so.
    assert len(echoing_api.requests) >= 3
    assert turn.decision.failed_open and turn.error and "rejected" in turn.error
    assert turn.capture.error and turn.capture.saved == ("My bank PIN hint is 'blue'",)
    assert not _shown(repr(turn))
    assert not _shown(caplog.text)
    exported = tmp_path / "export.jsonl"
    assert (
        memory_cli(["--dir", str(tmp_path / "mem"), "--user", "sec", "export", str(exported)]) == 0
    )
    assert "PIN hint" in exported.read_text() and not _shown(exported.read_text())


def test_echoed_key_never_reaches_the_page(echoing_api, tmp_path, monkeypatch):
    import streamlit as st

    from tests.integration.test_app import APP, everything_rendered

    monkeypatch.setenv("MEMGATE_MEMORY_DIR", str(tmp_path / "mem"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", echoing_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(APP, default_timeout=120).run()
        send_message(at, "Remember that my locker code is 4312")
        assert not at.exception, [e.value for e in at.exception]
        page = everything_rendered(at)
    finally:
        st.cache_resource.clear()
    assert "rejected" in page and "4312" in page  # the error and the turn are on the page
    assert not _shown(page)


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


# ---- raw HTML -----------------------------------------------------------------------


# Calls that put raw HTML on the page: st.html, components' html, and anything given
# unsafe_allow_html that is not the constant False.
def raw_html_calls(source: str) -> list[tuple[int, list[ast.expr]]]:
    """(line, arguments) of every call in `source` that renders raw HTML."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        named_html = isinstance(node.func, ast.Attribute) and node.func.attr == "html"
        unsafe = any(
            k.arg == "unsafe_allow_html"
            and not (isinstance(k.value, ast.Constant) and k.value.value is False)
            for k in node.keywords
        )
        if named_html or unsafe:
            content = [k.value for k in node.keywords if k.arg in ("body", "html")]
            calls.append((node.lineno, [*node.args, *content]))
    return calls


def module_constants(source: str) -> dict[str, str]:
    """Module-level names bound once in the file (no parameter or local reuse), to a string."""
    tree = ast.parse(source)
    bound: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            bound.setdefault(node.target.id, []).append(node.value or node.target)
        elif isinstance(node, ast.arg):  # a parameter of that name shadows the constant
            bound.setdefault(node.arg, []).append(node)
    top = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
    return {
        name: values[0].value
        for name, values in bound.items()
        if name in top
        and len(values) == 1
        and isinstance(values[0], ast.Constant)
        and isinstance(values[0].value, str)
    }


def unsafe_html_lines(source: str) -> list[int]:
    """Lines where raw HTML is rendered from anything but a string constant."""
    constants = module_constants(source)

    def constant(arg: ast.expr) -> bool:
        if isinstance(arg, ast.Constant):
            return isinstance(arg.value, str)
        return isinstance(arg, ast.Name) and arg.id in constants

    return [line for line, args in raw_html_calls(source) if not all(map(constant, args))]


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("CSS = '<style></style>'\nst.html(CSS)", False),
        ("st.html('<style></style>')", False),
        ("st.markdown(text, unsafe_allow_html=False)", False),
        ("st.html(turn.reply)", True),
        ("st.html(f'<b>{message}</b>')", True),
        ("CSS = '<style>'\nCSS += user\nst.html(CSS)", True),
        ("def f(CSS):\n    st.html(CSS)\nCSS = 'x'", True),  # a name bound twice is not
        ("def f():\n    CSS = reply\n    st.html(CSS)\nCSS = 'x'", True),  # a constant
        ("st.markdown(reply, unsafe_allow_html=True)", True),
        ("st.write(reply, unsafe_allow_html=flag)", True),
        ("components.html(reply, height=10)", True),
        ("st.html(body=reply)", True),
    ],
)
def test_the_raw_html_check_catches_user_content(source, flagged):
    assert bool(unsafe_html_lines(source)) is flagged, source


def test_app_renders_raw_html_only_from_its_own_constant_css():
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    calls = raw_html_calls(source)
    assert calls, "app.py has no raw-HTML call: this check would check nothing"
    assert unsafe_html_lines(source) == []
    # ...and that constant is a style sheet, nothing that runs or links out.
    css = module_constants(source)["CSS"]
    assert css.strip().startswith("<style>") and css.strip().endswith("</style>")
    assert css.count("<") == 2 and "script" not in css.lower() and "url(" not in css.lower()
