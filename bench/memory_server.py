"""The store on a local `chroma run` server, for the memory section (bench/memory_bench.py).

The same searches on an embedded store and on the server, interleaved; and separate
processes writing and searching at once on one server. Skipped, with the reason, where the
chroma executable is not installed.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from assistant.eval.stats import percentile
from bench.synthetic import pooled_memories, question, sentence_pool


def bench_server_vs_embedded(n: int, n_queries: int) -> dict[str, Any]:
    """The same searches on an embedded PersistentClient and on a local `chroma run` server."""
    from memory.embeddings import shared_model
    from memory.store import MemoryStore
    from tests.servers.chroma_server import ChromaServer, chroma_executable

    if not chroma_executable().exists():
        return {"skipped": "the chroma executable is not installed"}
    model = shared_model()
    rng = random.Random(11)
    pool, pool_vecs = sentence_pool(rng)
    mems, vecs = pooled_memories(n, rng, pool, pool_vecs)
    queries = [question(rng) for _ in range(n_queries)]
    with tempfile.TemporaryDirectory() as tmp, ChromaServer(Path(tmp) / "server") as server:
        embedded = MemoryStore.persistent(Path(tmp) / "embedded", "bench")
        remote = MemoryStore.http(server.host, server.port, "bench", cache_dir=Path(tmp) / "c")
        times: dict[str, list[float]] = {"embedded": [], "server": []}
        for store in (embedded, remote):
            store.add_records(mems, embeddings=vecs)
            store.search(queries[0], k=5)  # warm
        for q in queries:  # interleaved, so machine noise hits both alike
            for name, store in (("embedded", embedded), ("server", remote)):
                model.clear_cache()
                start = time.perf_counter()
                store.search(q, k=5)
                times[name].append((time.perf_counter() - start) * 1000)
    p50 = {name: statistics.median(values) for name, values in times.items()}
    return {
        "memories": n,
        "queries": n_queries,
        "embedded_p50_ms": round(p50["embedded"], 2),
        "server_p50_ms": round(p50["server"], 2),
        "embedded_p95_ms": round(percentile(times["embedded"], 0.95), 2),
        "server_p95_ms": round(percentile(times["server"], 0.95), 2),
        "ratio_server_over_embedded": round(p50["server"] / p50["embedded"], 2),
    }


def bench_processes(n_procs: int = 4, writes: int = 100) -> dict[str, Any]:
    """Separate processes on one `chroma run`: each writes and searches, then all verify."""
    from tests.servers.chroma_server import ChromaServer, chroma_executable
    from tests.servers.store_worker import Worker

    if not chroma_executable().exists():
        return {"skipped": "the chroma executable is not installed"}
    with tempfile.TemporaryDirectory() as tmp, ChromaServer(Path(tmp) / "server") as server:
        workers = [
            Worker(server.host, server.port, "bench-procs", Path(tmp) / f"c{i}")
            for i in range(n_procs)
        ]  # every store is open before the first write
        try:
            start = time.perf_counter()
            for n, w in enumerate(workers):
                w.send("burst", tag=f"p{n}", n=writes, search_every=10)
            bursts = [w.result() for w in workers]
            write_s = time.perf_counter() - start
            ids = [i for b in bursts for i in b["ids"]]
            for w in workers:
                w.send("verify", ids=ids)
            reports = [w.result() for w in workers]
        finally:
            for w in workers:
                w.close()
    return {
        "processes": n_procs,
        "writes": n_procs * writes,
        "acknowledged": len(ids),
        "searches_while_writing": sum(b["searches"] for b in bursts),
        "found_by_every_process": min(r["found"] for r in reports),
        "readable_by_every_process": min(r["readable"] for r in reports),
        "count_seen": sorted({r["count"] for r in reports}),
        "duplicates": len(ids) - len(set(ids)),
        "errors": sum(len(b["errors"]) for b in bursts),
        "first_error": next((e for b in bursts for e in b["errors"]), None),
        "writes_per_s": round(len(ids) / write_s, 1),
    }
