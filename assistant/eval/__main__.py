"""Command line for the evaluations; each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> module exposing add_arguments(parser) and run(args) -> int
SUBCOMMANDS = {
    "recall": ("assistant.eval.recall", "memory recall@k on a memory + question set"),
    "gate": ("assistant.eval.gate_eval", "retrieval-gate accuracy on labelled messages"),
    "load": ("assistant.eval.load", "concurrent offline sessions: turns/s, p50/p95, errors"),
    "answers": ("assistant.eval.answers", "replies per gate mode: right, damaged, first token"),
}


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one evaluation."""
    parser = argparse.ArgumentParser(prog="python -m assistant.eval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=help_text, description=module.__doc__))
    args = parser.parse_args(argv)
    return modules[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
