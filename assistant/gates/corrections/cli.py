"""`memory-gate memory corrections list|export|import|delete`: the user's gate corrections.

The memory CLI (`python -m memory`) with the app's own commands added: `corrections`, and
`reset-demo`, which restores the demo persona and, unless told to keep them, forgets the
corrections too. `main` runs it (`python -m assistant.gates.corrections.cli ...` in a
checkout).

An export is labelled data in the gate-eval format (one `{"message", "retrieve", ...}` per
line), so `memory-gate eval gate` and the trainer read it as they read our test sets, and
`import` reads those sets too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memory.records import MemoryStoreError
from memory.transfer import export_target, write_atomically


def add_commands(sub: Any) -> None:
    """Add the `corrections` command and its actions to the memory CLI's subparsers."""
    p = sub.add_parser(
        "corrections",
        help="the gate decisions you corrected: list, export, import, delete",
        description="A correction is the decision the gate should have made for a message "
        "(searched memory or not). The gate applies it at once to that message and to "
        "messages that say the same thing.",
    )
    actions = p.add_subparsers(dest="corrections_action", required=True, metavar="ACTION")
    q = actions.add_parser("list", help="every correction, newest first")
    q.add_argument("--json", action="store_true", help="one gate-eval JSON row per line")
    q.set_defaults(handler=cmd_list)
    q = actions.add_parser("export", help="write them as gate-eval JSONL ('-' for stdout)")
    q.add_argument("file", metavar="FILE.jsonl")
    q.add_argument("--force", action="store_true", help="replace FILE if it exists")
    q.set_defaults(handler=cmd_export)
    q = actions.add_parser(
        "import",
        help="add corrections from gate-eval JSONL (checked first; safe to run again)",
        description='Each line: {"message": str, "retrieve": true|false|null} plus optional '
        '"created_at", "gate" and "reason"; null labels are skipped. Every line is checked '
        "first: a bad one is reported and nothing is imported. The same message again "
        "replaces its correction.",
    )
    q.add_argument("file", type=Path, metavar="FILE.jsonl")
    q.set_defaults(handler=cmd_import)
    q = actions.add_parser("delete", help="forget corrections by id (the gate decides again)")
    q.add_argument("ids", nargs="+", metavar="ID")
    q.set_defaults(handler=cmd_delete)
    p = sub.add_parser(
        "reset-demo",
        help="restore the demo persona's memories exactly (the demo user only)",
        description="Between rehearsals: the demo user's memories become the persona again; "
        "memories added since are gone. Corrections are forgotten too, unless "
        "--keep-corrections. Refused on any other user's store.",
    )
    p.add_argument("--keep-corrections", action="store_true", help="keep the gate corrections")
    p.set_defaults(handler=cmd_reset_demo)


def _book(store: Any) -> Any:
    from assistant.gates.corrections.actions import open_corrections

    return open_corrections(store)


def _label(retrieve: bool) -> str:
    return f"{'search memory' if retrieve else 'no memory':13s}"


def cmd_list(store: Any, args: argparse.Namespace) -> int:
    """list: every correction, newest first."""
    for c in _book(store).list():
        if args.json:
            print(json.dumps(c.as_row()))
        else:
            print(f"{c.created_at[:19]}  {_label(c.retrieve)}  {c.id}  {c.message}")
    return 0


def cmd_export(store: Any, args: argparse.Namespace) -> int:
    """export FILE: every correction as a gate-eval row, oldest first."""
    target = None if args.file == "-" else export_target(args.file, store.folder, args.force)
    rows = sorted(_book(store).list(), key=lambda c: c.created_at)
    lines = [json.dumps(c.as_row()) + "\n" for c in rows]
    if target is None:
        sys.stdout.writelines(lines)
    else:
        write_atomically(target, "".join(lines), args.force)
        print(f"exported {len(lines)} corrections to {args.file}", file=sys.stderr)
    return 0


def cmd_import(store: Any, args: argparse.Namespace) -> int:
    """import FILE: every labelled row becomes a correction; nothing is written on a bad row."""
    from assistant.gates.labels import DataError, read_rows

    try:
        rows, skipped = read_rows(args.file)
    except DataError as exc:
        raise MemoryStoreError(f"{exc}; nothing was imported") from None
    parsed = []
    for row in rows:
        created = row.fields.get("created_at")
        if created is not None and not isinstance(created, str):
            raise MemoryStoreError(
                f"{args.file}: 'created_at' of {row.message!r} must be an ISO-8601 string; "
                "nothing was imported"
            )
        extra = [str(row.fields.get(key) or "") for key in ("gate", "reason")]
        parsed.append((row.message, row.retrieve, extra[0], extra[1], created or None))
    try:
        done = _book(store).add_many(parsed)
    except MemoryStoreError as exc:
        raise MemoryStoreError(f"{args.file}: {exc}; nothing was imported") from None
    note = f" ({skipped} unlabelled rows skipped)" if skipped else ""
    print(f"imported {len(done)} corrections{note}")
    return 0


def cmd_delete(store: Any, args: argparse.Namespace) -> int:
    """delete ID...: exit status 1 when an id was not there."""
    book = _book(store)
    missing = [cid for cid in args.ids if not book.delete(cid)]
    for cid in missing:
        print(f"no correction with id {cid}", file=sys.stderr)
    print(f"deleted {len(args.ids) - len(missing)}")
    return 1 if missing else 0


def cmd_reset_demo(store: Any, args: argparse.Namespace) -> int:
    """reset-demo [--keep-corrections]: the persona back, exactly; refused for other users."""
    from memory.persona import reset_demo

    restored = reset_demo(store)  # refuses another user's store before touching anything
    forgot = 0 if args.keep_corrections else _book(store).clear()
    kept = "kept the corrections" if args.keep_corrections else f"forgot {forgot} corrections"
    print(f"restored {restored} demo memories; {kept}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The memory CLI with the `corrections` command."""
    from memory.__main__ import main as memory_main

    return memory_main(argv, extra=(add_commands,))


if __name__ == "__main__":
    sys.exit(main())
