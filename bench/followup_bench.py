"""Follow-ups (issue 28): conversations answered per gate mode, and how follow-ups resolve.

Three measurements, one section of `make bench`:
- answers on the built-in model, last turns of our follow-up dev sets, per mode
  (`bench/answers_bench.py`, the same turn as the app's: `Chat.answer` with history);
- what the last turn is given, without a reply model, the conversation off, joined, and
  the mechanism, and the decision's time (`bench/followup_retrieval.py`);
- the mechanism's reading against CANARD's human rewrites (`bench/rewrite_bench.py`).

    python -m bench followups [--quick]

The held-out sets (every `followup_*_test` set of `FOLLOW_UP_SETS`, bench/answers_bench.py)
are not here: each is scored once, by hand, `python -m bench answers --sets <set>`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DEV = ["followup_nurse_dev", "followup_founder_dev"]


def run(quick: bool = False) -> dict[str, Any]:
    """All three measurements; the answers on one small sample when quick."""
    from bench import answers_bench, followup_retrieval, rewrite_bench

    if quick:
        plan = answers_bench.plan(False, DEV[:1])
        plan[DEV[0]].update(modes=["never", "local"], limit=6, max_tokens=40)
        answers = answers_bench.run(planned=plan)
    else:
        answers = answers_bench.run(sets=DEV)
    return {
        "answers": answers,
        "retrieval": followup_retrieval.run(),  # every dev set: no model, seconds
        "rewrite": rewrite_bench.run(quick),
    }


def markdown(results: dict[str, Any], plots: Path) -> str:
    """The three parts, each with the command that measures it alone."""
    from bench import answers_bench, followup_retrieval, rewrite_bench

    return "\n".join(
        [
            "Answers, last turns of conversations (`python -m bench answers --sets "
            + ",".join(DEV)
            + "`):",
            "",
            answers_bench.markdown(results["answers"], plots, plot_name="followups.png"),
            "",
            "What the last turn is given, without a model (`python -m bench followup-retrieval`):",
            "",
            followup_retrieval.markdown(results["retrieval"]),
            "The mechanism's reading on CANARD (`python -m bench rewrite`):",
            "",
            rewrite_bench.markdown(results["rewrite"]),
        ]
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench followups --help`)."""
    parser.add_argument("--quick", action="store_true", help="fewer rows of each part")


def command(args: argparse.Namespace) -> int:
    """Run the section alone and print its figures as JSON."""
    import json

    print(json.dumps(run(args.quick), indent=2, default=str))
    return 0
