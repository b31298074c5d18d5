"""Command line for the benchmarks: `python -m bench <command> [options]`.

With no command (or only options, as `make bench-quick` gives), every section runs and
docs/benchmarks.md is written: the same as `python -m bench all`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from bench import COMMANDS


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command; only its own module is imported."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["all", *argv]
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    chosen = argv[0] if argv[0] in COMMANDS else None
    module = None
    for name, (module_name, help_text) in COMMANDS.items():
        if name != chosen:
            sub.add_parser(name, help=help_text)
            continue
        module = importlib.import_module(module_name)
        command = sub.add_parser(
            name,
            help=help_text,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if hasattr(module, "add_arguments"):
            module.add_arguments(command)
    args = parser.parse_args(argv)
    assert module is not None  # argparse refused any other command
    return module.command(args)


if __name__ == "__main__":
    sys.exit(main())
