"""Follow-ups (issue 28): conversations answered per gate mode, and how follow-ups resolve.

Three measurements, one section of `make bench`:
- answers on the built-in model, last turns of our follow-up dev sets, per mode
  (`bench/answers_bench.py`, the same turn as the app's: `Chat.answer` with history);
- what the last turn is given, without a reply model, resolver on and off, and the local
  gate's decision time with it (`bench/followup_retrieval.py`);
- the resolver's rewrites against CANARD's human rewrites (`bench/rewrite_bench.py`).

    python -m bench followups [--quick]

The held-out sets (followup_chef_test, followup_vet_test, followup_farmer_test,
followup_student_test, followup_architect_test, followup_baker_test,
followup_beekeeper_test, followup_ranger_test, followup_deckhand_test,
followup_paramedic_test, followup_teacher2_test, followup_glazier_test,
followup_midwife_test, followup_busdriver_test, followup_translator_test,
followup_electrician_test, followup_postman_test, followup_pharmacist_test,
followup_courier_test, followup_librarian_test, followup_barista_test,
followup_surveyor_test, followup_tailor_test, followup_plumber_test,
followup_dentist_test, followup_violinist_test, followup_reporter_test,
followup_carpenter_test, followup_zookeeper_test, followup_chemist_test,
followup_sommelier_test, followup_firefighter_test, followup_jeweller_test,
followup_potter_test, followup_welder_test, followup_hairdresser_test,
followup_mechanic_test, followup_fisherman_test, followup_attendant_test,
followup_optician_test, followup_lorrydriver_test, followup_accountant_test,
followup_gardener_test, followup_dancer_test, followup_shopkeeper_test,
followup_researcher_test, followup_driver_test, followup_locksmith_test,
followup_cook_test, followup_engineer_test, followup_nanny_test, followup_organist_test,
followup_ferryman_test, followup_conductor_test, followup_broadcaster_test,
followup_bookseller_test, followup_vetnurse_test, followup_lifeguard_test,
followup_stonemason_test, followup_porter_test, followup_fishmonger_test,
followup_actuary_test, followup_florist_test, followup_tramdriver_test, followup_nailtech_test,
followup_sysadmin_test, followup_roofer_test, followup_curator_test,
followup_drummer_test, followup_plasterer_test, followup_dockworker_test,
followup_skiinstructor_test, followup_vintner_test,
followup_upholsterer_test) are not here: each
is scored once, by hand,
`python -m bench answers --sets <set>`.
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
            "The resolver on CANARD (`python -m bench rewrite`):",
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
