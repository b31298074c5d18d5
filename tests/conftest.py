"""Shared fixtures: a fake Messages API on 127.0.0.1, and a guard against the network."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.runtime.fake_api import FakeAnthropicServer
from tests.fakes import ListSearch, ScriptedModel

# The tiers: tests/unit's guard, `--fast`, the slow markers; where temporary folders live;
# and what AppTest would redo for every app test.
pytest_plugins = ["tests.tiers", "tests.scratch", "tests.apptest"]

_real_connect = socket.socket.connect
ROOT = Path(__file__).resolve().parent.parent
# What the code writes when it is run for real: benchmark reports, the README's
# screenshot, the gate weights, the demo data. Tests must write only to temp folders.
WRITTEN_BY_TOOLS = ("docs", "assistant/data", "memory/data")


def _loopback_only(self: socket.socket, address: object) -> None:
    # Tests must never reach the network: only loopback and unix sockets are allowed.
    if isinstance(address, tuple) and self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            allowed = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            allowed = False
        if not allowed:
            raise OSError(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with no API key and no way off this machine."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    # The app would start a 1 GB local model; tests that want one
    # (tests/integration/test_local_model.py) point MEMGATE_LOCAL_MODEL at the small model.
    monkeypatch.setenv("MEMGATE_LOCAL_MODEL", "off")
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


def _stamps() -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file in the folders that tools write to."""
    return {
        str(path.relative_to(ROOT)): (path.stat().st_mtime_ns, path.stat().st_size)
        for folder in WRITTEN_BY_TOOLS
        for path in sorted((ROOT / folder).rglob("*"))
        if path.is_file() and "quick" not in path.relative_to(ROOT).parts  # bench-quick's own
    }


@pytest.fixture(scope="session", autouse=True)
def _checkout_untouched() -> Iterator[None]:
    """Fail the run if a test wrote into docs/ or a data folder of the checkout."""
    before = _stamps()
    yield
    after = _stamps()
    changed = sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )
    assert not changed, f"tests wrote into the checkout (use tmp_path): {changed}"


@pytest.fixture(scope="session")
def _fake_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def fake_api(_fake_server: FakeAnthropicServer) -> Iterator[FakeAnthropicServer]:
    """The fake Messages API, emptied of queued replies and recorded requests."""
    _fake_server.reset()
    default = _fake_server.script
    yield _fake_server
    _fake_server.script = default
    _fake_server.reset()


@pytest.fixture
def held() -> Iterator[threading.Event]:
    """For Reply(hold=...): a reply that arrives only after the test, never before a timeout."""
    event = threading.Event()
    yield event
    event.set()  # let the server's handler thread finish


@pytest.fixture
def sdk_client(fake_api: FakeAnthropicServer):  # noqa: ANN201 - anthropic is imported lazily
    """The real anthropic SDK pointed at the fake server, without retries."""
    import anthropic

    return anthropic.Anthropic(api_key="sk-test-fake", base_url=fake_api.url, max_retries=0)


@pytest.fixture
def scripted_model() -> ScriptedModel:
    """The default model for a unit test, in simonw/llm's mock_model style: in process.

    Pass it where an anthropic client goes. `scripted_model.queue("reply", ...)` sets the
    next replies (an exception is raised by its call), `.script` computes a reply from the
    request, else `.default` ("OK.") answers; `.calls` holds every request as the keyword
    arguments the code passed, and `.prompts(text)` the prompts that contain `text`. No HTTP
    and no SDK: what must go over the wire (status codes, retries, timeouts, thinking
    blocks, broken streams) is tested with `fake_api` and `sdk_client` instead.
    """
    return ScriptedModel()


@pytest.fixture
def search() -> ListSearch:
    """An in-process memory search over a few persona facts (no Chroma, no embeddings)."""
    return ListSearch(
        (
            "Dinner with Alex on Thursday at 7:30pm at Nopa",
            "My partner Jordan's birthday is on 12 March",
            "I'm allergic to peanuts",
        )
    )


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real `chroma run` server on a free loopback port, stopped after the module."""
    import sys

    from tests.servers.chroma_server import ChromaServer, chroma_executable  # heavy: only when used

    if not chroma_executable().exists():
        pytest.skip(f"the chroma executable is not installed next to {sys.executable}")
    with ChromaServer(tmp_path_factory.mktemp("chroma")) as running:
        yield running
