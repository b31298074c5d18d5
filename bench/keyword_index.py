"""The keyword index, measured: SQLite FTS5 against the hand-written BM25 (memory/lexical.py).

python -m bench keyword-index [--sizes 10000 100000] [--locomo PATH] [--repeat 3]

Both sides get the same words: FTS5 stores the text after memory.lexical.tokenize (the
same stemming and stopwords), so what differs is the engine, not the tokenizer. Printed:
  * LoCoMo recall@5 of the store's hybrid score (dense candidates by exact cosine over the
    same MiniLM vectors, keyword candidates from each index, memory.scoring.rank) and of
    the keyword index alone;
  * per size: build time, search p50 (top 120 candidates + idf, as the store asks), the
    p50 of one durable write, and cold open (the snapshot read, or a connect and a first
    query), each the median of --repeat runs.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from bench.figures import timings_ms
from memory.lexical import BM25Index
from memory.scoring import CANDIDATES, rank
from memory.tokens import tokenize

EVAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "eval"
DEPTH = max(CANDIDATES, 4 * 5)


class Fts5Index:
    """The candidate: an FTS5 table of tokenised memories, ranked by SQLite's bm25().

    FTS5 rows are keyed by an integer rowid; a plain table maps memory ids to rowids (a
    delete by an UNINDEXED id column would scan the whole table), and keeps the count.
    """

    def __init__(self, path: Path | str = ":memory:") -> None:
        self.db = sqlite3.connect(str(path), isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS ids(rid INTEGER PRIMARY KEY, id TEXT UNIQUE)")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER)")
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('n', 0)")
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(body, tokenize='unicode61')"
        )
        self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(docs, row)")

    def add_many(self, docs: Iterable[tuple[str, str]]) -> None:
        """Index (id, text) pairs in one transaction, replacing earlier texts of those ids."""
        db = self.db
        db.execute("BEGIN")
        added = 0
        for mid, text in docs:
            row = db.execute("SELECT rid FROM ids WHERE id = ?", (mid,)).fetchone()
            if row is None:
                rid = db.execute("INSERT INTO ids(id) VALUES (?)", (mid,)).lastrowid
                added += 1
            else:
                rid = row[0]
                db.execute("DELETE FROM docs WHERE rowid = ?", (rid,))
            db.execute(
                "INSERT INTO docs(rowid, body) VALUES (?, ?)", (rid, " ".join(tokenize(text)))
            )
        db.execute("UPDATE meta SET v = v + ? WHERE k = 'n'", (added,))
        db.execute("COMMIT")

    def __len__(self) -> int:
        return int(self.db.execute("SELECT v FROM meta WHERE k = 'n'").fetchone()[0])

    def search(self, query: str, k: int) -> list[str]:
        """The k best ids by bm25() for any of the query's words."""
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self.db.execute(
            "SELECT ids.id FROM (SELECT rowid AS r FROM docs WHERE docs MATCH ? "
            "ORDER BY bm25(docs) LIMIT ?) JOIN ids ON ids.rid = r",
            (match, k),
        )
        return [r[0] for r in rows]

    def idf(self, query: str) -> dict[str, float]:
        """The same BM25 idf as memory.lexical, from FTS5's own document frequencies."""
        terms = list(dict.fromkeys(tokenize(query)))
        n = len(self)
        marks = ",".join("?" * len(terms))
        df = dict(self.db.execute(f"SELECT term, doc FROM vocab WHERE term IN ({marks})", terms))
        return {
            t: float(np.log(1.0 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))) for t in terms
        }


class Bm25Side:
    """Today's index behind the same three calls."""

    def __init__(self) -> None:
        self.index = BM25Index()

    def add_many(self, docs: Iterable[tuple[str, str]]) -> None:
        self.index.add_many(docs)

    def search(self, query: str, k: int) -> list[str]:
        return [mid for mid, _, _ in self.index.search(query, k)]

    def idf(self, query: str) -> dict[str, float]:
        return self.index.idf(query)


def _median_ms(fn: Callable[[], Any], n: int) -> float:
    return statistics.median(timings_ms(fn, n))


def recall(path: Path, k: int = 5) -> dict[str, float]:
    """LoCoMo recall@k, hybrid and keyword-only, for each index."""
    from assistant.eval.recall import load_locomo
    from memory.embeddings import shared_model

    ds = load_locomo(path)
    model = shared_model()
    model.warm()
    per_group: dict[str, tuple[list[str], list[str], np.ndarray]] = {}
    for group, mems in ds.memories.items():
        ids, texts = [i for i, _ in mems], [t for _, t in mems]
        per_group[group] = (ids, texts, np.asarray(model.encode(texts), dtype=np.float32))
    queries = np.asarray(model.encode([q.question for q in ds.questions]), dtype=np.float32)
    out: dict[str, float] = {"questions": len(ds.questions)}
    for name, make in (("bm25", Bm25Side), ("fts5", Fts5Index)):
        indexes = {}
        for group, (ids, texts, _) in per_group.items():
            indexes[group] = make()
            indexes[group].add_many(zip(ids, texts, strict=True))
        hybrid = keyword = 0
        for q, qv in zip(ds.questions, queries, strict=True):
            ids, texts, vecs = per_group[q.group]
            index = indexes[q.group]
            kw = index.search(q.question, DEPTH)
            keyword += bool(set(kw[:k]) & q.targets)
            sims = vecs @ qv
            dense = np.argsort(-sims)[:DEPTH].tolist()
            pos = {mid: i for i, mid in enumerate(ids)}
            cands = {ids[i]: (texts[i], float(sims[i])) for i in dense}
            cands.update({m: (texts[pos[m]], float(sims[pos[m]])) for m in kw})
            top = [mid for mid, _ in rank(cands, index.idf(q.question), k)]
            hybrid += bool(set(top) & q.targets)
        out[f"{name}_hybrid_recall_at_{k}"] = round(hybrid / len(ds.questions), 4)
        out[f"{name}_keyword_recall_at_{k}"] = round(keyword / len(ds.questions), 4)
    return out


def sizes(n: int, repeat: int, tmp: Path) -> dict[str, float]:
    """Build, search, write and cold-open figures for both indexes at `n` memories."""
    from bench.synthetic import question, sentence

    rng = random.Random(n)
    docs = [(f"m{i}", sentence(rng)) for i in range(n)]
    queries = [question(rng) for _ in range(50)]
    out: dict[str, float] = {}

    def one_search(index: Any) -> Callable[[], None]:
        it = iter(queries * 1000)
        return lambda: (index.search(q := next(it), DEPTH), index.idf(q))

    def ranking_only(index: Any) -> Callable[[], None]:
        it = iter(queries * 1000)
        return lambda: index.search(next(it), DEPTH)

    # Hand-written BM25: build, save (its snapshot is what makes it durable), reload.
    start = time.perf_counter()
    bm25 = BM25Index()
    bm25.add_many(docs)
    snap = tmp / f"{n}.bm25"
    bm25.save(snap, {})
    out["bm25_build_s"] = round(time.perf_counter() - start, 2)
    out["bm25_search_p50_ms"] = round(_median_ms(one_search(Bm25Side_of(bm25)), 200), 3)
    out["bm25_ranking_only_p50_ms"] = round(_median_ms(ranking_only(Bm25Side_of(bm25)), 200), 3)
    # A durable write: add one memory; the store saves the whole snapshot every
    # max(2000, n/8) writes, so the amortised cost is one save spread over those writes.
    save_ms = _median_ms(lambda: bm25.save(snap, {}), repeat)
    add_ms = _median_ms(lambda: bm25.add(f"w{rng.random()}", sentence(rng)), 200)
    out["bm25_write_p50_ms"] = round(add_ms + save_ms / max(2000, n // 8), 3)
    out["bm25_snapshot_mb"] = round(snap.stat().st_size / 1e6, 1)
    out["bm25_cold_open_ms"] = round(
        _median_ms(lambda: Bm25Side_of(BM25Index.load(snap)[0]).search(queries[0], DEPTH), repeat),
        1,
    )
    # FTS5: build into a file, then every write is its own committed transaction.
    db = tmp / f"{n}.sqlite3"
    start = time.perf_counter()
    fts = Fts5Index(db)
    fts.add_many(docs)
    out["fts5_build_s"] = round(time.perf_counter() - start, 2)
    out["fts5_search_p50_ms"] = round(_median_ms(one_search(fts), 200), 3)
    out["fts5_ranking_only_p50_ms"] = round(_median_ms(ranking_only(fts), 200), 3)
    out["fts5_write_p50_ms"] = round(
        _median_ms(lambda: fts.add_many([(f"w{rng.random()}", sentence(rng))]), 200), 3
    )
    fts.db.close()
    out["fts5_db_mb"] = round(sum(p.stat().st_size for p in tmp.glob(f"{n}.sqlite3*")) / 1e6, 1)
    out["fts5_cold_open_ms"] = round(
        _median_ms(lambda: Fts5Index(db).search(queries[0], DEPTH), repeat), 1
    )
    return out


def Bm25Side_of(index: BM25Index) -> Bm25Side:  # noqa: N802 - reads as a constructor
    """A Bm25Side around an existing index."""
    side = Bm25Side()
    side.index = index
    return side


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench keyword-index --help`)."""
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--locomo", type=Path, default=EVAL_DIR / "locomo10_memory.json")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-recall", action="store_true", help="sizes only, no LoCoMo")


def command(args: argparse.Namespace) -> int:
    """Print the figures, one `name: value` per line."""
    print(f"sqlite {sqlite3.sqlite_version}")
    if args.no_recall:
        print("locomo: skipped (--no-recall)")
    elif args.locomo.exists():
        for key, value in recall(args.locomo).items():
            print(f"locomo {key}: {value}", flush=True)
    else:
        print(f"locomo: skipped, no {args.locomo}")
    with tempfile.TemporaryDirectory(prefix="memgate-kw-") as tmp:
        for n in args.sizes:
            for key, value in sizes(n, args.repeat, Path(tmp)).items():
                print(f"n={n} {key}: {value}", flush=True)
    return 0
