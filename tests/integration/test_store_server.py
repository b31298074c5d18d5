"""The same MemoryStore against a real `chroma run` server on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.keyword import KeywordIndexes
from memory.persona import seed_demo
from memory.store import MemoryStore
from tests.servers.chroma_server import ChromaServer, chroma_executable

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    """A Chroma server on a free loopback port, stopped after the module."""
    if not chroma_executable().exists():
        pytest.skip(f"the chroma executable is not installed next to {sys.executable}")
    data = tmp_path_factory.mktemp("chroma-server")
    with ChromaServer(data) as running:
        yield running.host, running.port, data


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Server-mode keyword indexes are saved under XDG_CACHE_HOME: keep them in tmp."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_store_works_against_the_server(server):
    host, port, _ = server
    store = MemoryStore.open(user_id="srv-a", host=host, port=port)
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


def test_a_new_client_loads_the_saved_index_and_the_later_writes(server, tmp_path):
    host, port, _ = server
    cache = tmp_path / "cache"
    first = MemoryStore.http(host, port, "srv-rebuild", cache_dir=cache)
    mid = first.add("Locker combination: quartz-falcon-27")
    first.close()  # saves the keyword index in the cache folder
    assert list(cache.glob("*/*.bm25"))
    # Its own keyword indexes: as if a new process connected.
    second = MemoryStore.http(host, port, "srv-rebuild", cache_dir=cache, indexes=KeywordIndexes())
    assert second.keywords is not first.keywords
    assert second.search("quartz-falcon-27", k=1, min_similarity=-1)[0].id == mid
    later = first.add("The boat is moored at pier 39-B")
    assert second.search("pier 39-B", k=1, min_similarity=-1)[0].id == later


def test_server_data_survives_a_restart_of_the_client_process(server, tmp_path):
    host, port, _ = server
    code = (
        "from memory.store import MemoryStore; import sys;"
        f"s = MemoryStore.http('{host}', {port}, 'srv-proc');"
        "print(s.add(sys.argv[1]) if len(sys.argv) > 1 else s.search('tortoise', k=1)[0].text)"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    subprocess.run(
        [sys.executable, "-c", code, "My tortoise is named Sheldon"],
        env=env,
        cwd=root,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=root, check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "My tortoise is named Sheldon"


def test_a_server_that_goes_away_is_one_clear_error_and_a_restart_loses_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    # Before: raw httpx.ConnectError from the store, ~100 lines of traceback from the CLI.
    from assistant.gates.rules import always_gate
    from assistant.reply.offline import OfflineResponder
    from assistant.turn.pipeline import Pipeline
    from memory.__main__ import main
    from memory.store import MemoryStoreError

    if not chroma_executable().exists():
        pytest.skip(f"the chroma executable is not installed next to {sys.executable}")
    server = ChromaServer(tmp_path / "srv").start()
    try:
        store = MemoryStore.http(server.host, server.port, "srv-down")
        kept = store.add("The spare key is in the birdhouse")
        server.stop()
        where = f"{server.host}:{server.port}"
        calls = {
            "count": store.count,
            "search": lambda: store.search("spare key"),
            "add": lambda: store.add("A fact written while the server is down"),
            "list": store.list,
        }
        for name, call in calls.items():
            with pytest.raises(MemoryStoreError, match=f"server at {where} is not answering") as e:
                call()
            assert "chroma run --path" in str(e.value), name
        turn = Pipeline(gate=always_gate(), store=store, responder=OfflineResponder()).respond(
            "where is the spare key?"
        )
        assert turn.search_error.startswith("memory search failed: MemoryStoreError: The Chroma")
        for args in (["search", "spare key"], ["add", "another fact"]):
            code = main(["--host", server.host, "--port", str(server.port), "--user", "x", *args])
            err = capsys.readouterr().err
            assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
            assert err.startswith(f"error: The Chroma server at {where} is not answering")
        server.start()  # the same port and data: the open store carries on
        assert store.count() == 1 and store.get(kept) is not None
        assert store.search("spare key", k=1)[0].id == kept
        assert store.add("Written after the restart") and store.count() == 2
    finally:
        server.stop()
