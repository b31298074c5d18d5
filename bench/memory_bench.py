"""Memory benchmark: add rate, search latency vs size, disk, cold open, embeddings, recall.

Run: python -m bench memory [--quick] [--json]. Sizes 1k / 10k / 100k are generated
reproducibly (seeded templates). The 1k store is embedded for real. For 10k and 100k,
embedding every text would take ~7 minutes per 100k on this machine, so a pool of real
sentence embeddings is combined instead: each memory's text is two pool sentences joined,
and its vector is the normalised sum of the two sentences' real vectors. Search always
embeds the query for real, and the lexical index sees the real joined text.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from assistant.config import Settings
from assistant.eval.stats import percentile
from bench.figures import pyplot, table_head, table_row
from bench.memory_server import bench_processes, bench_server_vs_embedded
from bench.synthetic import pooled_memories, question, sentence, sentence_pool

ROOT = Path(__file__).resolve().parent.parent
# The shared evaluation data sits next to the project checkout (see DESIGN.md).
EVAL_DIR = Settings.from_env().eval_dir or ROOT.parent / "shared" / "eval"


def _disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def _search_latency(store: Any, n_queries: int, seed: int = 7) -> dict[str, float]:
    rng = random.Random(seed)
    queries = [question(rng) for _ in range(n_queries + 5)]
    for q in queries[:5]:  # warm caches so the figures are steady-state
        store.search(q, k=5)
    from memory.embeddings import shared_model

    times = []
    model = shared_model()
    for q in queries[5:]:
        model.clear_cache()  # every timed search embeds its query for real
        start = time.perf_counter()
        store.search(q, k=5)
        times.append((time.perf_counter() - start) * 1000)
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
    }


def _cold_open(path: Path, user: str) -> dict[str, float]:
    """Time a fresh process: imports, then open + first query (model load included)."""
    code = (
        "import time, json; t0 = time.perf_counter()\n"
        "from memory.store import MemoryStore\n"
        "t1 = time.perf_counter()\n"
        f"s = MemoryStore.persistent({str(path)!r}, {user!r}); s.warm()\n"
        "s.search('when am I meeting Alex?', k=5)\n"
        "t2 = time.perf_counter()\n"
        "print(json.dumps({'import_s': t1 - t0, 'open_first_query_s': t2 - t1}))\n"
    )
    from tests.processes import run_python

    started = time.perf_counter()
    out = run_python("-c", code, check=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    figures["process_total_s"] = time.perf_counter() - started
    return {k: round(v, 3) for k, v in figures.items()}


def bench_sizes(sizes: list[int], n_queries: int, real_up_to: int = 1000) -> dict[str, Any]:
    """Add throughput, search latency, disk size and cold open per store size."""
    from memory.embeddings import shared_model
    from memory.store import Memory, MemoryStore

    model = shared_model()
    model.warm()
    rng = random.Random(42)
    start = time.perf_counter()
    pool, pool_vecs = sentence_pool(rng)
    out: dict[str, Any] = {
        "pool_sentences": len(pool),
        "pool_embed_s": round(time.perf_counter() - start, 2),
    }
    with tempfile.TemporaryDirectory(prefix="memgate-bench-") as tmp:
        # One-at-a-time remember(): embedding + near-duplicate check + write, as the app does.
        single = MemoryStore.persistent(Path(tmp) / "single", "bench")
        texts = [f"{pool[i]} (note {i})" for i in range(100 if real_up_to >= 1000 else 30)]
        start = time.perf_counter()
        for text in texts:
            single.remember(text)
        out["remember_one_by_one_per_s"] = round(len(texts) / (time.perf_counter() - start), 1)
        for size in sizes:
            folder = Path(tmp) / f"n{size}"
            store = MemoryStore.persistent(folder, "bench")
            if size <= real_up_to:
                # Small store: embed every text for real; the add time includes embedding.
                mems = [
                    Memory(f"m{i}", f"{sentence(rng)} (note {i})", None, "", "imported", {})
                    for i in range(size)
                ]
                start = time.perf_counter()
                store.add_records(mems)
                mode = "real embeddings"
            else:
                mems, vecs = pooled_memories(size, rng, pool, pool_vecs)
                start = time.perf_counter()
                store.add_records(mems, embeddings=vecs)
                mode = "pooled embeddings"
            add_s = time.perf_counter() - start
            row = {
                "mode": mode,
                "add_s": round(add_s, 2),
                "add_per_s": round(size / add_s, 1),
                **_search_latency(store, n_queries),
                "disk_mb": round(_disk_mb(folder), 1),
            }
            store.close()  # saves the keyword index and frees the folder for the next process
            row["cold_open"] = _cold_open(folder, "bench")
            out[str(size)] = row
    return out


def bench_embedding_ratio(n: int = 30, batches: int = 2) -> dict[str, Any]:
    """Our embedding function vs Chroma's stock ONNX MiniLM fed the same two files."""
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    from memory.embeddings import (
        TOKENIZER_PATH,
        MiniLMEmbeddingFunction,
        _model_path,
        shared_model,
    )

    rng = random.Random(3)
    queries = [question(rng) for _ in range(n)]
    docs = [sentence(rng) for _ in range(64)]
    with tempfile.TemporaryDirectory() as tmp:
        onnx_dir = Path(tmp) / "onnx"
        onnx_dir.mkdir()
        # Chroma checks these six files exist but reads only model.onnx and tokenizer.json.
        (onnx_dir / "model.onnx").symlink_to(_model_path())
        (onnx_dir / "tokenizer.json").symlink_to(TOKENIZER_PATH)
        for name in (
            "config.json",
            "special_tokens_map.json",
            "tokenizer_config.json",
            "vocab.txt",
        ):
            (onnx_dir / name).write_text("{}")

        class Stock(ONNXMiniLM_L6_V2):
            DOWNLOAD_PATH = Path(tmp)

        stock, ours = Stock(), MiniLMEmbeddingFunction()
        stock(["warm"]), ours(["warm"])
        agree = float(np.dot(np.asarray(stock([queries[0]])[0]), np.asarray(ours([queries[0]])[0])))

        def per_call(fn: Any, items: list[list[str]]) -> float:
            times = []
            for batch in items:
                shared_model().clear_cache()
                start = time.perf_counter()
                fn(batch)
                times.append((time.perf_counter() - start) * 1000)
            return statistics.median(times)

        q_ours = per_call(ours, [[q] for q in queries])
        q_stock = per_call(stock, [[q] for q in queries])
        doc_batches = [docs[:32], docs[32:]][:batches]
        d_ours = per_call(ours, doc_batches)
        d_stock = per_call(stock, doc_batches)
    return {
        "query_ms_ours": round(q_ours, 2),
        "query_ms_stock": round(q_stock, 2),
        "query_speedup": round(q_stock / q_ours, 1),
        "batch32_ms_ours": round(d_ours, 1),
        "batch32_ms_stock": round(d_stock, 1),
        "batch_speedup": round(d_stock / d_ours, 1),
        "cosine_ours_vs_stock": round(agree, 4),
    }


def bench_recall(quick: bool) -> dict[str, Any]:
    """Persona recall@5, and LoCoMo recall@5/@10 when the shared data is present."""
    from assistant.eval.recall import evaluate, load_jsonl, load_locomo
    from memory.persona import QUESTIONS_PATH, persona

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        mem_path = Path(tmp) / "persona.jsonl"
        mem_path.write_text(
            "".join(json.dumps({"id": r["id"], "text": r["text"]}) + "\n" for r in persona())
        )
        rep = evaluate(load_jsonl(mem_path, QUESTIONS_PATH), 5)
        out["persona_recall_at_5"] = rep["recall_at_k"]
        out["persona_recall_at_5_with_cutoff"] = rep["with_cutoff"]["recall_at_k"]
    path = EVAL_DIR / "locomo_memory.json"
    if quick or not path.exists():
        out["locomo"] = "skipped (quick run)" if quick else f"skipped: no {path.name}"
        return out
    for name, file in (("conv26", path), ("all10", EVAL_DIR / "locomo10_memory.json")):
        if not file.exists():
            continue
        ds = load_locomo(file)
        for k in (5, 10):
            rep = evaluate(ds, k)
            out[f"locomo_{name}_recall_at_{k}"] = rep["recall_at_k"]
            out[f"locomo_{name}_recall_at_{k}_with_cutoff"] = rep["with_cutoff"]["recall_at_k"]
    return out


def run(quick: bool = False) -> dict[str, Any]:
    """Run the memory benchmark and return its figures."""
    sizes = [1000] if quick else [1000, 10_000, 100_000]
    return {
        # Quick runs use pooled vectors even at 1k so the whole section stays well under 1 min.
        "sizes": bench_sizes(
            sizes, n_queries=30 if quick else 100, real_up_to=0 if quick else 1000
        ),
        "embedding": bench_embedding_ratio(10 if quick else 30, 1 if quick else 2),
        "server": bench_server_vs_embedded(300 if quick else 10_000, 30 if quick else 100),
        "processes": bench_processes(4, 25 if quick else 100),
        "recall": bench_recall(quick),
    }


def markdown(results: dict[str, Any], plots_dir: Path | None = None) -> str:
    """The results as a Markdown section."""
    sizes = results["sizes"]
    lines = table_head(
        "memories",
        "vectors",
        "add /s",
        "search p50 ms",
        "search p95 ms",
        "disk MB",
        "cold open + 1st query s (imports s)",
        align="rlrrrrr",
    )
    for key, row in sizes.items():
        if not key.isdigit():
            continue
        cold = row["cold_open"]
        lines.append(
            table_row(
                f"{int(key):,}",
                row["mode"],
                f"{row['add_per_s']:,.0f}",
                row["p50_ms"],
                row["p95_ms"],
                row["disk_mb"],
                f"{cold['open_first_query_s']} ({cold['import_s']})",
            )
        )
    emb = results["embedding"]
    rec = results["recall"]
    lines += [
        "",
        f"remember() one at a time (embed + duplicate check + write): "
        f"{sizes['remember_one_by_one_per_s']}/s.",
        f"Embedding a query: ours {emb['query_ms_ours']} ms vs Chroma's stock ONNX function "
        f"on the same files {emb['query_ms_stock']} ms (**{emb['query_speedup']}x**); "
        f"batch of 32: {emb['batch32_ms_ours']} vs {emb['batch32_ms_stock']} ms "
        f"({emb['batch_speedup']}x); cosine between their vectors {emb['cosine_ours_vs_stock']}.",
        f"Embedding throughput (batches of 32): {32 / emb['batch32_ms_ours'] * 1000:,.0f} texts/s.",
    ]
    server = results.get("server", {})
    if "ratio_server_over_embedded" in server:
        lines += [
            "",
            f"Embedded PersistentClient vs a local `chroma run` server, the same "
            f"{server['queries']} searches over {server['memories']:,} memories, interleaved: "
            f"p50 {server['embedded_p50_ms']} ms vs {server['server_p50_ms']} ms "
            f"(server / embedded = **{server['ratio_server_over_embedded']}x**; p95 "
            f"{server['embedded_p95_ms']} vs {server['server_p95_ms']} ms).",
        ]
    elif server:
        lines += ["", f"Server comparison: {server.get('skipped')}"]
    procs = results.get("processes", {})
    if "errors" in procs:
        lines += [
            "",
            "Separate processes on one `chroma run` server (all stores open before the first "
            "write), each remembering distinct memories and searching every 10th write, then "
            "every process reading and keyword-searching every acknowledged id:",
            "",
            *table_head(
                "processes",
                "writes",
                "acknowledged",
                "found from every process",
                "duplicates",
                "errors",
                "writes/s",
                align="rrrrrrr",
            ),
            table_row(
                *(procs[k] for k in ("processes", "writes", "acknowledged")),
                *(procs[k] for k in ("found_by_every_process", "duplicates", "errors")),
                procs["writes_per_s"],
            ),
        ]
    elif procs:
        lines += ["", f"Multi-process run: {procs.get('skipped')}"]
    lines += [
        "",
        *table_head("recall set", "k", "recall", "with the relevance cut-off"),
    ]
    for key, value in rec.items():
        if key.endswith("_with_cutoff") or not isinstance(value, float):
            continue
        name, _, k = key.rpartition("_at_")
        lines.append(table_row(name, k, f"{value:.3f}", rec.get(key + "_with_cutoff", "-")))
    skipped = [f"{k}: {v}" for k, v in rec.items() if isinstance(v, str)]
    if skipped:
        lines += ["", "Not measured: " + "; ".join(skipped)]
    if plots_dir is not None:
        _plot_sizes(sizes, Path(plots_dir) / "memory-search.png")
        lines += ["", "![search latency vs memory count](memory-search.png)"]
    return "\n".join(lines)


def _plot_sizes(sizes: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    counts = sorted(int(k) for k in sizes if k.isdigit())
    fig, ax = plt.subplots(figsize=(6, 3))
    for stat, style in (("p50_ms", "o-"), ("p95_ms", "s--")):
        ax.plot(counts, [sizes[str(c)][stat] for c in counts], style, label=stat[:3])
    ax.set_xscale("log")
    ax.set_xlabel("memories in the store")
    ax.set_ylabel("search ms")
    ax.set_title("Hybrid memory search latency (mem0 publishes p50 148 ms)")
    ax.set_ylim(bottom=0)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench memory --help`)."""
    parser.add_argument(
        "--quick", action="store_true", help="1k pooled memories only; no LoCoMo; < 1 min"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        help="only the size table, for these store sizes (JSON; e.g. --sizes 10000 100000)",
    )


def command(args: argparse.Namespace) -> int:
    """Command line: print the figures."""
    if args.sizes:
        print(json.dumps(bench_sizes(args.sizes, n_queries=100), indent=2))
        return 0
    results = run(args.quick)
    print(json.dumps(results, indent=2) if args.json else markdown(results))
    return 0
