"""Separate Python processes on one real `chroma run` server see each other's writes at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers.chroma_server import ChromaServer
from tests.servers.store_worker import Worker

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def server(chroma_server: ChromaServer) -> ChromaServer:
    """The module's Chroma server (conftest's chroma_server)."""
    return chroma_server


def _workers(server: ChromaServer, user: str, n: int, tmp: Path) -> list[Worker]:
    # The processes load their stores at the same time (one after the other, four took
    # 4-6 s), and every one answers "ready" before anyone writes.
    workers = [
        Worker(server.host, server.port, user, tmp / f"cache-{i}", wait=False) for i in range(n)
    ]
    try:
        for w in workers:
            w.wait_ready()
    except BaseException:
        for w in workers:
            w.close()
        raise
    return workers


@pytest.mark.timeout(300)
def test_add_update_delete_in_one_process_are_seen_by_another(server, tmp_path):
    a, b = _workers(server, "procs-crud", 2, tmp_path)
    with a, b:
        assert a.pid != b.pid and b.call("count") == 0
        mid = a.call("remember", text="The garage door code is 7319")["id"]
        assert b.call("search", query="garage door code")[0]["id"] == mid  # keywords
        paraphrase = b.call("search", query="how do I get into the garage?", k=3)
        assert mid in [m["id"] for m in paraphrase]
        assert [m["id"] for m in b.call("list")] == [mid]
        assert b.call("count") == 1 and [m["id"] for m in b.call("export")] == [mid]

        a.call("update", id=mid, text="The garage door code changed to 5820")
        assert b.call("get", id=mid)["text"] == "The garage door code changed to 5820"
        assert b.call("search", query="5820", min_similarity=-1)[0]["id"] == mid
        assert b.call("search", query="7319", min_similarity=-1) == [] or all(
            "7319" not in m["text"] for m in b.call("search", query="7319", min_similarity=-1)
        )

        assert a.call("delete", id=mid) is True
        for query in ("garage door code", "5820", "how do I get into the garage?"):
            assert mid not in [m["id"] for m in b.call("search", query=query, min_similarity=-1)]
        assert b.call("get", id=mid) is None
        assert b.call("list") == [] and b.call("count") == 0


@pytest.mark.timeout(300)
def test_two_processes_remembering_one_fact_store_one_memory(server, tmp_path):
    a, b = _workers(server, "procs-same", 2, tmp_path)
    with a, b:
        for n in range(5):  # several rounds, each a fresh race
            text = f"My sister's birthday party is on May {n + 4} at the boathouse"
            a.send("remember", text=text)
            b.send("remember", text=text)
            first, second = a.result(), b.result()
            assert first["id"] == second["id"]
            assert sorted([first["merged"], second["merged"]]) in ([False, True], [True, True])
        assert a.call("count") == b.call("count") == 5
        # Said again later, in other words of the same fact: still one memory each.
        again = b.call("remember", text="My sister's birthday party is on May 4 at the boathouse.")
        assert again["merged"] and a.call("count") == 5


@pytest.mark.timeout(600)
def test_four_processes_writing_and_searching_lose_nothing(server, tmp_path):
    # 20 writes each (a search every 5th, 4 per process, as 40 with one every 10th had)
    # race the four processes' writes, searches and index catch-ups many times over: a
    # write takes ~60 ms on 2 cores, so the bursts overlap for seconds. Every process then
    # reads, and finds by search, all 80. The benchmark (python -m bench memory) runs the
    # 4 x 100 the docs quote.
    per_process = 20
    total = 4 * per_process
    workers = _workers(server, "procs-load", 4, tmp_path)
    try:
        for n, w in enumerate(workers):
            w.send("burst", tag=f"p{n}", n=per_process, search_every=5)
        bursts = [w.result() for w in workers]
        assert [b["errors"] for b in bursts] == [[], [], [], []]
        ids = [i for b in bursts for i in b["ids"]]
        assert len(ids) == len(set(ids)) == total  # no duplicates, nothing merged
        for w in workers:
            w.send("verify", ids=ids)
        for report in [w.result() for w in workers]:
            assert report == {"readable": total, "found": total, "count": total}
    finally:
        for w in workers:
            w.close()
