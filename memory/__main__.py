"""Manage the long-term memory store: python -m memory COMMAND [options].

The folder and user default to MEMGATE_MEMORY_DIR / MEMGATE_USER (or a Chroma server with
MEMGATE_CHROMA_HOST / MEMGATE_CHROMA_PORT), read as the app reads them; --dir, --user,
--host and --port override them.

examples:
  python -m memory seed-demo                       load the demo persona (idempotent)
  python -m memory search "when am I meeting Alex?"
  python -m memory add "Alex moved to Oakland" --meta topic=people
  python -m memory export backup.jsonl && python -m memory --dir new import backup.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memory.records import SOURCES, Memory, MemoryStoreError
from memory.transfer import EXPORT_FIELDS, export_target, read_import, write_atomically


def _meta_value(raw: str) -> str | int | float | bool:
    """A command-line value as the number or boolean it spells, else the string itself."""
    # Only a value that round-trips is converted: "02139" (a zip code) and "1.50" stay
    # text, because storing 2139 or 1.5 would lose what the user typed.
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    try:
        number: int | float = int(raw)
    except ValueError:
        try:
            number = float(raw)
        except ValueError:
            return raw
    if str(number) != raw or not math.isfinite(number):
        return raw
    return number


def _parse_meta(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MemoryStoreError(f"--meta takes KEY=VALUE, got {pair!r}")
        out[key] = _meta_value(value)
    return out


def _port(raw: str) -> int:
    port = int(raw)
    if not 0 < port < 65536:
        raise ValueError(raw)
    return port


def _similarity(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not -1.0 <= value <= 1.0:  # also refuses nan, which compares false to everything
        raise argparse.ArgumentTypeError(f"must be a number from -1 to 1, got {raw!r}")
    return value


def build_parser(extra: Sequence[Callable[[Any], None]] = ()) -> argparse.ArgumentParser:
    """The argument parser for `python -m memory`; each command carries its handler."""
    parser = argparse.ArgumentParser(
        prog="python -m memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dir",
        type=Path,
        help="memory folder (default: MEMGATE_MEMORY_DIR or .memory-gate)",
    )
    parser.add_argument("--user", help="whose memories (default: MEMGATE_USER or demo)")
    parser.add_argument("--host", help="Chroma server host instead of a folder")
    parser.add_argument("--port", type=_port, help="Chroma server port (default 8000)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("add", help="remember a fact (the same fact again updates the old one)")
    p.add_argument("text")
    p.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra metadata; repeatable (numbers and true/false are stored as such)",
    )
    p.add_argument("--source", default="typed", choices=list(SOURCES))
    p.set_defaults(handler=cmd_add)

    p = sub.add_parser("search", help="the most relevant memories for a question")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5, help="how many at most (default 5)")
    p.add_argument(
        "--min-similarity",
        type=_similarity,
        default=None,
        help="relevance cut-off from -1 to 1 (default: the store's; -1 shows everything)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("list", help="memories, newest first")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("delete", help="delete memories by id")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.set_defaults(handler=cmd_delete)

    sub.add_parser("count", help="how many memories the user has").set_defaults(handler=cmd_count)
    p = sub.add_parser("clear", help="delete ALL of the user's memories")
    p.add_argument("--yes", action="store_true", help="confirm")
    p.set_defaults(handler=cmd_clear)
    p = sub.add_parser("seed-demo", help="load the demo persona (loading twice changes nothing)")
    p.set_defaults(handler=cmd_seed_demo)

    p = sub.add_parser(
        "import",
        help="add memories from a JSONL export (checked first; safe to run again)",
        description='Each line: {"text": ...} plus optional "id", "created_at" (ISO-8601), '
        '"source" (typed/captured/seeded/imported) and "metadata" (str/int/float/bool '
        "values). Every line is checked first: one bad line is reported by number and "
        "nothing is imported. Then the rules of `add` apply: a line without an id gets the "
        "id of its text, and the same fact as a memory already there updates that memory. "
        "An import that was stopped part-way is finished by running it again: what is "
        "already there is skipped, nothing is added twice.",
    )
    p.add_argument("file", type=Path, metavar="FILE.jsonl")
    p.set_defaults(handler=cmd_import)
    p = sub.add_parser(
        "export",
        help="write every memory to JSONL ('-' for stdout)",
        description="Writes a new file (a temporary file, then a rename, so a crash leaves "
        "no half-written export), never inside the memory folder.",
    )
    p.add_argument("file", metavar="FILE.jsonl")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    p.set_defaults(handler=cmd_export)
    for add_commands in extra:  # commands of the app's own (its gate corrections)
        add_commands(sub)
    return parser


def open_store(args: argparse.Namespace) -> Any:
    """The store the options (or the MEMGATE_* environment, read as the app reads it) name."""
    from memory.settings import SettingsError, StoreSettings

    try:
        settings = StoreSettings.from_env()
    except SettingsError as exc:
        raise MemoryStoreError(str(exc)) from None
    return settings.overridden(
        memory_dir=args.dir, user_id=args.user, host=args.host, port=args.port
    ).open()


def _as_dict(memory: Any, with_similarity: bool = False) -> dict[str, Any]:
    out = {f: getattr(memory, f) for f in EXPORT_FIELDS}
    if with_similarity:
        out["similarity"] = memory.similarity
    if memory.flag:
        out["flag"] = memory.flag
    return out


def _warn_flag(flag: str | None) -> None:
    if flag:
        print(
            f"warning: this memory {flag}. It is kept, and shown in the app, but never sent "
            "to the model.",
            file=sys.stderr,
        )


def cmd_add(store: Any, args: argparse.Namespace) -> int:
    """add TEXT [--meta K=V]: remember a fact."""
    added = store.remember(args.text, _parse_meta(args.meta), args.source)
    print(f"{'updated' if added.merged else 'added'} {added.id}")
    _warn_flag(added.flag)
    return 0


def cmd_search(store: Any, args: argparse.Namespace) -> int:
    """search QUERY: the most relevant memories."""
    for m in store.search(args.query, args.k, args.min_similarity):
        if args.json:
            print(json.dumps(_as_dict(m, with_similarity=True)))
        else:
            print(f"{m.similarity:.3f}  {m.id}  {'[withheld] ' if m.flag else ''}{m.text}")
    return 0


def cmd_list(store: Any, args: argparse.Namespace) -> int:
    """list: a page of memories, newest first."""
    for m in store.list(args.offset, args.limit):
        if args.json:
            print(json.dumps(_as_dict(m)))
        else:
            withheld = "[withheld] " if m.flag else ""
            print(f"{m.created_at[:19]}  {m.source:8s}  {m.id}  {withheld}{m.text}")
    return 0


def cmd_delete(store: Any, args: argparse.Namespace) -> int:
    """delete ID...: exit status 1 when an id was not there."""
    missing = [i for i in args.ids if not store.delete(i)]
    for i in missing:
        print(f"no memory with id {i}", file=sys.stderr)
    print(f"deleted {len(args.ids) - len(missing)}")
    return 1 if missing else 0


def cmd_count(store: Any, args: argparse.Namespace) -> int:
    """count: how many memories."""
    print(store.count())
    return 0


def cmd_clear(store: Any, args: argparse.Namespace) -> int:
    """clear --yes: delete every memory of the user."""
    if not args.yes:
        print("error: clear deletes every memory of this user; add --yes", file=sys.stderr)
        return 2
    print(f"deleted {store.clear()}")
    return 0


def cmd_seed_demo(store: Any, args: argparse.Namespace) -> int:
    """seed-demo: load the demo persona."""
    from memory.persona import seed_demo

    added = seed_demo(store)
    print(f"added {added} demo memories ({store.count()} in store)")
    return 0


def cmd_import(store: Any, args: argparse.Namespace) -> int:
    """import FILE: add the records of an export by the rules of `add`; a re-run adds nothing."""
    records = read_import(args.file)
    done = store.import_records(
        records, progress=lambda n: print(f"{n}/{len(records)}", file=sys.stderr, flush=True)
    )
    # Every count is of this run, and the store's total is read after it: a re-run after a
    # kill says what it added and what the killed run had already written.
    print(
        f"imported {done.added}, merged {done.merged} into memories already there, "
        f"{done.repeated} the same fact as an earlier line, skipped {done.present} already "
        f"present; {store.count()} memories in the store"
    )
    if done.flagged:
        print(
            f"warning: {done.flagged} of them read like instructions to the assistant: kept, "
            "and never sent to the model (`list` marks them [withheld])",
            file=sys.stderr,
        )
    if done.missing:
        print(
            f"error: {done.missing} of the memories this file maps to were not found when read "
            "back (deleted by another process meanwhile?): run the import again",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_export(store: Any, args: argparse.Namespace) -> int:
    """export FILE: every memory as JSONL, oldest first."""
    target = None if args.file == "-" else export_target(args.file, store.folder, args.force)
    lines = [json.dumps(_as_dict_export(m)) + "\n" for m in store.export()]
    if target is None:
        sys.stdout.writelines(lines)
    else:
        write_atomically(target, "".join(lines), args.force)
        print(f"exported {len(lines)} to {args.file}", file=sys.stderr)
    return 0


def _as_dict_export(memory: Memory) -> dict[str, Any]:
    # The flag is not exported: an import checks every text again, with the rules it has.
    return {f: getattr(memory, f) for f in EXPORT_FIELDS}


def main(argv: list[str] | None = None, extra: Sequence[Callable[[Any], None]] = ()) -> int:
    """Entry point: parse, run, and turn every expected failure into one clear line.

    `extra` adds subcommands (each is given the subparsers): the memory package imports
    nothing of the app's, so the app brings its own (assistant/gates/corrections/cli.py).
    """
    args = build_parser(extra).parse_args(argv)
    try:
        return int(args.handler(open_store(args), args))
    except (MemoryStoreError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
