"""Two processes on one real `chroma run` server see each other's corrections."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assistant.gates.base import Method
from assistant.gates.corrections.gate import GateReader
from assistant.gates.local import shared_local_gate
from assistant.gates.registry import with_corrections
from memory.corrections import CorrectionBook
from memory.store import MemoryStore
from tests.processes import run_python
from tests.servers.chroma_server import ChromaServer

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]

# The other process: opens the user's store on the server and runs one action on its book.
CHILD = """
import json, sys
from assistant.gates.corrections.actions import open_corrections
from memory.store import MemoryStore
host, port, action, *rest = sys.argv[1:]
store = MemoryStore.http(host, int(port), "srv-corrector")
book = open_corrections(store)
if action == "add":
    print(book.add(rest[0], rest[1] == "true", gate="local").id)
elif action == "list":
    print(json.dumps([c.as_row() for c in book.list()]))
elif action == "delete":
    print(book.delete(rest[0]))
"""


@pytest.fixture(scope="module")
def server(chroma_server: ChromaServer) -> ChromaServer:
    """The module's Chroma server (conftest's chroma_server)."""
    return chroma_server


def child(server: ChromaServer, tmp: Path, *args: str) -> str:
    """Run CHILD in a new Python process; its stdout."""
    done = run_python(
        "-c",
        CHILD,
        server.host,
        str(server.port),
        *args,
        env={"XDG_CACHE_HOME": str(tmp / "child-cache")},
        timeout=240,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.timeout(600)
def test_two_processes_on_one_server_see_each_others_corrections(server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = MemoryStore.http(server.host, server.port, "srv-corrector")
    book = CorrectionBook(store.client, "srv-corrector", GateReader(), recheck_s=0.0)
    gate = with_corrections(shared_local_gate(), book)
    message, rewording = "What breed is Mango?", "Mango is which breed?"
    assert not gate.decide(rewording).retrieve

    made = child(server, tmp_path, "add", message, "true")  # another process corrects
    decided = gate.decide(rewording)
    assert decided.retrieve and decided.method is Method.CORRECTION
    assert decided.corrected_by == made

    mine = book.add("Remind me how compound interest works", False)
    listed = child(server, tmp_path, "list")
    assert made in listed and mine.id in listed

    assert child(server, tmp_path, "delete", made) == "True"
    time.sleep(0.01)
    back = gate.decide(rewording)
    assert not back.retrieve and back.method is Method.LOCAL


@pytest.mark.timeout(300)
def test_a_server_that_went_away_is_the_stores_one_error(tmp_path, monkeypatch):
    from assistant.gates.corrections.actions import open_corrections
    from memory.records import MemoryStoreError

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    server = ChromaServer(tmp_path / "srv").start()
    try:
        book = open_corrections(MemoryStore.http(server.host, server.port, "srv-gone"))
        kept = book.add("Where do I play basketball?", True)
        server.stop()
        where = f"{server.host}:{server.port}"
        # What the sidebar's list and delete button call: one readable error, not httpx's.
        for call in (book.count, lambda: book.delete(kept.id)):
            with pytest.raises(MemoryStoreError, match=f"server at {where} is not answering"):
                call()
    finally:
        server.stop()
