"""Manage the long-term memory store: python -m memory COMMAND [options].

The folder and user default to MEMGATE_MEMORY_DIR / MEMGATE_USER (or a Chroma server with
MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT); --dir, --user, --host and --port override them.

examples:
  python -m memory seed-demo                       load the demo persona (idempotent)
  python -m memory search "when am I meeting Alex?"
  python -m memory add "Alex moved to Oakland" --meta topic=people
  python -m memory export backup.jsonl && python -m memory --dir new import backup.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXPORT_FIELDS = ("id", "text", "created_at", "source", "metadata")


def _meta_value(raw: str) -> str | int | float | bool:
    # Command-line values are strings; store numbers and booleans as what they look like.
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


def _parse_meta(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"error: --meta takes KEY=VALUE, got {pair!r}")
        out[key] = _meta_value(value)
    return out


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for `python -m memory`."""
    parser = argparse.ArgumentParser(
        prog="python -m memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dir", type=Path, help="memory folder (default: MEMGATE_MEMORY_DIR or .memory-gate)"
    )
    parser.add_argument("--user", help="whose memories (default: MEMGATE_USER or demo)")
    parser.add_argument("--host", help="Chroma server host instead of a folder")
    parser.add_argument("--port", type=int, help="Chroma server port (default 8000)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("add", help="remember a fact (a near-duplicate updates the old one)")
    p.add_argument("text")
    p.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra metadata; repeatable",
    )
    p.add_argument("--source", default="typed", choices=["typed", "captured", "seeded", "imported"])

    p = sub.add_parser("search", help="the most relevant memories for a question")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5, help="how many at most (default 5)")
    p.add_argument(
        "--min-similarity",
        type=float,
        default=None,
        help="relevance cut-off (default: the store's; -1 shows everything)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    p = sub.add_parser("list", help="memories, newest first")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    p = sub.add_parser("delete", help="delete memories by id")
    p.add_argument("ids", nargs="+", metavar="ID")

    sub.add_parser("count", help="how many memories the user has")
    p = sub.add_parser("clear", help="delete ALL of the user's memories")
    p.add_argument("--yes", action="store_true", help="confirm")
    sub.add_parser("seed-demo", help="load the demo persona (loading twice changes nothing)")

    p = sub.add_parser(
        "import",
        help="add memories from a JSONL export (all or nothing)",
        description='Each line: {"text": ...} plus optional "id", "created_at" (ISO-8601), '
        '"source" (typed/captured/seeded/imported) and "metadata" (str/int/float/bool '
        "values). Every line is checked first: one bad line is reported by number and "
        "nothing is imported. Ids already in the store are skipped.",
    )
    p.add_argument("file", type=Path, metavar="FILE.jsonl")
    p = sub.add_parser("export", help="write every memory to JSONL ('-' for stdout)")
    p.add_argument("file", metavar="FILE.jsonl")
    return parser


def open_store(args: argparse.Namespace) -> Any:
    """The store the options (or the environment) point at."""
    from assistant.config import Settings
    from memory.store import MemoryStore

    settings = Settings.from_env()
    changes: dict[str, Any] = {}
    if args.dir is not None:
        changes["memory_dir"] = args.dir
        changes["chroma_host"] = None
    if args.user:
        changes["user_id"] = args.user
    if args.host:
        changes["chroma_host"] = args.host
    if args.port:
        changes["chroma_port"] = args.port
    return MemoryStore.open(settings.with_(**changes))


def read_import(path: Path) -> list[Any]:
    """Parse and validate a JSONL export; raises MemoryStoreError naming the bad line."""
    from memory.jsonl import JsonlError, read_jsonl
    from memory.store import SOURCES, Memory, MemoryStoreError, validate_metadata

    records = []
    seen: set[str] = set()
    try:
        numbered = list(read_jsonl(path))
    except JsonlError as exc:
        raise MemoryStoreError(str(exc)) from None
    for n, row in numbered:
        try:
            text = row.get("text")
            if not isinstance(text, str) or not text.strip():
                raise MemoryStoreError('"text" must be a non-empty string')
            mid = row.get("id")
            if mid is not None and (not isinstance(mid, str) or not mid):
                raise MemoryStoreError('"id" must be a non-empty string')
            source = row.get("source", "imported")
            if source not in SOURCES:
                raise MemoryStoreError(f'"source" must be one of {", ".join(SOURCES)}')
            created = row.get("created_at", "")
            if not isinstance(created, str):
                raise MemoryStoreError('"created_at" must be an ISO-8601 string')
            meta = validate_metadata(row.get("metadata") or {})
        except MemoryStoreError as exc:
            raise MemoryStoreError(f"{path}, line {n}: {exc}") from None
        if mid is None:
            import uuid

            mid = uuid.uuid4().hex
        if mid in seen:
            raise MemoryStoreError(f"{path}, line {n}: id {mid!r} appears twice")
        seen.add(mid)
        records.append(Memory(mid, text, None, created, source, meta))
    return records


def _as_dict(memory: Any, with_similarity: bool = False) -> dict[str, Any]:
    out = {f: getattr(memory, f) for f in EXPORT_FIELDS}
    if with_similarity:
        out["similarity"] = memory.similarity
    return out


def run(args: argparse.Namespace) -> int:
    """Execute one parsed command; returns the exit status."""
    store = open_store(args)
    cmd = args.command
    if cmd == "add":
        added = store.remember(args.text, _parse_meta(args.meta), args.source)
        print(f"{'updated' if added.merged else 'added'} {added.id}")
    elif cmd == "search":
        for m in store.search(args.query, args.k, args.min_similarity):
            if args.json:
                print(json.dumps(_as_dict(m, with_similarity=True)))
            else:
                print(f"{m.similarity:.3f}  {m.id}  {m.text}")
    elif cmd == "list":
        for m in store.list(args.offset, args.limit):
            if args.json:
                print(json.dumps(_as_dict(m)))
            else:
                print(f"{m.created_at[:19]}  {m.source:8s}  {m.id}  {m.text}")
    elif cmd == "delete":
        missing = [i for i in args.ids if not store.delete(i)]
        for i in missing:
            print(f"no memory with id {i}", file=sys.stderr)
        print(f"deleted {len(args.ids) - len(missing)}")
        return 1 if missing else 0
    elif cmd == "count":
        print(store.count())
    elif cmd == "clear":
        if not args.yes:
            print("error: clear deletes every memory of this user; add --yes", file=sys.stderr)
            return 2
        print(f"deleted {store.clear()}")
    elif cmd == "seed-demo":
        added = _seed(store)
        print(f"added {added} demo memories ({store.count()} in store)")
    elif cmd == "import":
        records = read_import(args.file)
        fresh = [r for r in records if store.get(r.id) is None]
        store.add_records(fresh)
        print(f"imported {len(fresh)}, skipped {len(records) - len(fresh)} already present")
    elif cmd == "export":
        lines = [json.dumps(_as_dict(m)) + "\n" for m in store.export()]
        if args.file == "-":
            sys.stdout.writelines(lines)
        else:
            Path(args.file).write_text("".join(lines), encoding="utf-8")
            print(f"exported {len(lines)} to {args.file}", file=sys.stderr)
    return 0


def _seed(store: Any) -> int:
    from memory.persona import seed_demo

    return seed_demo(store)


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and turn store errors into one clear line."""
    from memory.store import MemoryStoreError

    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except MemoryStoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
