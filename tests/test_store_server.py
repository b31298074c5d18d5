"""The same MemoryStore against a real `chroma run` server on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.config import Settings
from memory import store as store_module
from memory.persona import seed_demo
from memory.server import ChromaServer, chroma_executable
from memory.store import MemoryStore

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    """A Chroma server on a free loopback port, stopped after the module."""
    if not chroma_executable().exists():
        pytest.skip(f"the chroma executable is not installed next to {sys.executable}")
    data = tmp_path_factory.mktemp("chroma-server")
    with ChromaServer(data) as running:
        yield running.host, running.port, data


def test_store_works_against_the_server(server):
    host, port, _ = server
    store = MemoryStore.open(Settings(chroma_host=host, chroma_port=port, user_id="srv-a"))
    assert store.count() == 0
    assert seed_demo(store) > 40
    assert seed_demo(store) == 0
    assert "persona-01" in [m.id for m in store.search("when am I meeting Alex?", k=3)]
    mid = store.add("The storage unit code is 2468")
    assert store.remember("The storage unit code is 2468.").merged
    store.update(mid, "The storage unit code changed to 1357")
    assert store.search("1357", k=1, min_similarity=-1)[0].id == mid
    assert store.delete(mid) and store.get(mid) is None


def test_users_are_isolated_on_the_server(server):
    host, port, _ = server
    alice = MemoryStore.http(host, port, "srv-alice")
    bob = MemoryStore.http(host, port, "srv-bob")
    secret = alice.add("Alice hides the spare key in the birdhouse")
    assert bob.get(secret) is None
    assert all(m.id != secret for m in bob.search("spare key birdhouse", min_similarity=-1))
    assert bob.count() == 0 and alice.count() == 1


def test_a_new_client_rebuilds_the_lexical_index_from_the_server(server, monkeypatch):
    host, port, _ = server
    first = MemoryStore.http(host, port, "srv-rebuild")
    mid = first.add("Locker combination: quartz-falcon-27")
    monkeypatch.setattr(store_module, "_registry", {})  # as if a new process connected
    second = MemoryStore.http(host, port, "srv-rebuild")
    assert second._shared is not first._shared
    assert second.search("quartz-falcon-27", k=1, min_similarity=-1)[0].id == mid


def test_server_data_survives_a_restart_of_the_client_process(server):
    host, port, _ = server
    code = (
        "from memory.store import MemoryStore; import sys;"
        f"s = MemoryStore.http('{host}', {port}, 'srv-proc');"
        "print(s.add(sys.argv[1]) if len(sys.argv) > 1 else s.search('tortoise', k=1)[0].text)"
    )
    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        [sys.executable, "-c", code, "My tortoise is named Sheldon"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "My tortoise is named Sheldon"
