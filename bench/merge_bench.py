"""Which pairs of texts the store merges: true duplicates merged, different facts kept apart.

    python -m bench merge [--pairs FILE] [--show]

Each labelled pair (`training/data/merge_pairs.jsonl`: {"a", "b", "same", "kind"}) goes
through a real store in a temporary folder, three ways: `remember(a)` then `remember(b)`
(the CLI's `add`, the sidebar and capture); an import of `a`, then an import of `b`; one
import holding both lines. A pair counts as merged when the store then holds one memory,
which is what a user would see in `list`. Kinds starting with "perm_" are permutations:
the same words in another order, a different fact.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory.records import Memory
from memory.store import MemoryStore

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "training" / "data" / "merge_pairs.jsonl"


@dataclass(frozen=True)
class Pair:
    """Two texts and whether they state the same fact."""

    a: str
    b: str
    same: bool
    kind: str

    @property
    def permutation(self) -> bool:
        """The same words in another order."""
        return self.kind.startswith("perm_")


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    """The labelled pairs of a JSONL file."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Pair(r["a"], r["b"], bool(r["same"]), r["kind"]) for r in rows]


def _record(text: str) -> Memory:
    return Memory("", text, None, "", "imported", {})


def _remember(store: MemoryStore, pair: Pair) -> None:
    store.remember(pair.a)
    store.remember(pair.b)


def _two_imports(store: MemoryStore, pair: Pair) -> None:
    store.import_records([_record(pair.a)])
    store.import_records([_record(pair.b)])


def _one_import(store: MemoryStore, pair: Pair) -> None:
    store.import_records([_record(pair.a), _record(pair.b)])


WAYS: dict[str, Callable[[MemoryStore, Pair], None]] = {
    "remember, then remember": _remember,
    "import, then import": _two_imports,
    "one import, both lines": _one_import,
}


def merged(store: MemoryStore, way: Callable[[MemoryStore, Pair], None], pair: Pair) -> bool | str:
    """Whether the store holds one memory after writing both texts of `pair` that way.

    A write that raises gives the exception's name instead: it is counted, and shown.
    """
    store.clear()
    try:
        way(store, pair)
    except Exception as exc:  # a crash is a result of the rule under test: report it
        return type(exc).__name__
    return store.count() == 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench merge --help`)."""
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--show", action="store_true", help="list every wrong decision")


def command(args: argparse.Namespace) -> int:
    """Print, per way of writing, how many pairs of each label were merged."""
    pairs = load_pairs(args.pairs)
    same = [p for p in pairs if p.same]
    perms = [p for p in pairs if p.permutation]
    print(
        f"{len(pairs)} pairs: {len(same)} the same fact, {len(pairs) - len(same)} different "
        f"({len(perms)} of them permutations)"
    )
    print(
        f"{'way':26s} {'same fact merged':>17s} {'different kept apart':>21s} "
        f"{'permutations merged':>20s} {'errors':>7s}"
    )
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore.persistent(Path(folder) / "mem", "bench-merge")
        vectors = store.embed([t for p in pairs for t in (p.a, p.b)])
        cosine = [float(vectors[2 * i] @ vectors[2 * i + 1]) for i in range(len(pairs))]
        wrong: dict[int, list[str]] = {}
        for name, way in WAYS.items():
            results = [merged(store, way, p) for p in pairs]
            got = [r is True for r in results]
            errors = [r for r in results if isinstance(r, str)]
            n_same = sum(g for g, p in zip(got, pairs, strict=True) if p.same)
            n_apart = sum(not g for g, p in zip(got, pairs, strict=True) if not p.same)
            n_perm = sum(g for g, p in zip(got, pairs, strict=True) if p.permutation)
            print(
                f"{name:26s} {f'{n_same}/{len(same)}':>17s} "
                f"{f'{n_apart}/{len(pairs) - len(same)}':>21s} "
                f"{f'{n_perm}/{len(perms)}':>20s} {len(errors):>7d}"
            )
            for i, (r, p) in enumerate(zip(results, pairs, strict=True)):
                if r is not p.same:
                    error = f" ({r})" if isinstance(r, str) else ""
                    wrong.setdefault(i, []).append(name.split(",")[0] + error)
        store.close()
    if args.show:
        print("\nwrong decisions (cosine, kind, label, ways):")
        for i, ways in wrong.items():
            p = pairs[i]
            verdict = "kept apart" if p.same else "MERGED"
            pair = f"{p.a!r} / {p.b!r}"
            print(f"  {cosine[i]:.3f} {p.kind:20s} {verdict:10s} {pair} ({'; '.join(ways)})")
    return 0
