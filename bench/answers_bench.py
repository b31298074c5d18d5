"""Answers on the built-in model: right, damaged and how soon, per gate mode and question set.

The same measurement as `memory-gate eval answers` (assistant/eval/answers.py), on the
built-in Qwen2.5 1.5B whatever key is set, over our dev sets, a GSM8K sample (maths, with a
persona's memories stored beside it) and LoCoMo conv-26 (token F1). Our unseen set,
`teacher_test`, is not in `make bench`: it is scored once, by hand,
`python -m bench answers --sets teacher_test`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.answers_plot import plot
from bench.figures import load_average, table_head, table_row

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = ROOT / "evaluation" / "answers"
LOCOMO = ROOT.parent / "shared" / "eval" / "locomo_memory.json"

ALL_MODES = ("never", "always", "always-no-cutoff", "local", "cascade", "llm")
FOLLOW_UP_SETS = {  # conversation set -> the persona whose memories it asks about
    "followup_nurse_dev": "nurse_dev",
    "followup_founder_dev": "founder_dev",
    "followup_pilot_dev": "followup_pilot_dev",
    "followup_chef_test": "followup_chef_test",
    "followup_vet_test": "followup_vet_test",
    "followup_farmer_test": "followup_farmer_test",
    "followup_student_test": "followup_student_test",
    "followup_architect_test": "followup_architect_test",
    "followup_baker_test": "followup_baker_test",
    "followup_beekeeper_test": "followup_beekeeper_test",
    "followup_ranger_test": "followup_ranger_test",
    "followup_deckhand_test": "followup_deckhand_test",
    "followup_paramedic_test": "followup_paramedic_test",
    "followup_teacher2_test": "followup_teacher2_test",
    "followup_glazier_test": "followup_glazier_test",
    "followup_midwife_test": "followup_midwife_test",
    "followup_busdriver_test": "followup_busdriver_test",
    "followup_translator_test": "followup_translator_test",
    "followup_electrician_test": "followup_electrician_test",
    "followup_postman_test": "followup_postman_test",
    "followup_pharmacist_test": "followup_pharmacist_test",
    "followup_courier_test": "followup_courier_test",
    "followup_librarian_test": "followup_librarian_test",
    "followup_barista_test": "followup_barista_test",
    "followup_surveyor_test": "followup_surveyor_test",
    "followup_tailor_test": "followup_tailor_test",
    "followup_plumber_test": "followup_plumber_test",
    "followup_dentist_test": "followup_dentist_test",
    "followup_violinist_test": "followup_violinist_test",
    "followup_reporter_test": "followup_reporter_test",
    "followup_carpenter_test": "followup_carpenter_test",
    "followup_zookeeper_test": "followup_zookeeper_test",
    "followup_chemist_test": "followup_chemist_test",
    "followup_sommelier_test": "followup_sommelier_test",
    "followup_firefighter_test": "followup_firefighter_test",
    "followup_jeweller_test": "followup_jeweller_test",
    "followup_potter_test": "followup_potter_test",
    "followup_welder_test": "followup_welder_test",
    "followup_hairdresser_test": "followup_hairdresser_test",
    "followup_mechanic_test": "followup_mechanic_test",
    "followup_fisherman_test": "followup_fisherman_test",
    "followup_attendant_test": "followup_attendant_test",
    "followup_optician_test": "followup_optician_test",
    "followup_lorrydriver_test": "followup_lorrydriver_test",
    "followup_accountant_test": "followup_accountant_test",
    "followup_gardener_test": "followup_gardener_test",
    "followup_dancer_test": "followup_dancer_test",
    "followup_shopkeeper_test": "followup_shopkeeper_test",
    "followup_researcher_test": "followup_researcher_test",
    "followup_driver_test": "followup_driver_test",
    "followup_locksmith_test": "followup_locksmith_test",
    "followup_cook_test": "followup_cook_test",
    "followup_engineer_test": "followup_engineer_test",
    "followup_nanny_test": "followup_nanny_test",
    "followup_organist_test": "followup_organist_test",
    "followup_ferryman_test": "followup_ferryman_test",
    "followup_conductor_test": "followup_conductor_test",
    "followup_broadcaster_test": "followup_broadcaster_test",
    "followup_bookseller_test": "followup_bookseller_test",
    "followup_vetnurse_test": "followup_vetnurse_test",
    "followup_lifeguard_test": "followup_lifeguard_test",
    "followup_stonemason_test": "followup_stonemason_test",
    "followup_porter_test": "followup_porter_test",
    "followup_fishmonger_test": "followup_fishmonger_test",
    "followup_actuary_test": "followup_actuary_test",
    "followup_florist_test": "followup_florist_test",
    "followup_tramdriver_test": "followup_tramdriver_test",
    "followup_nailtech_test": "followup_nailtech_test",
    "followup_sysadmin_test": "followup_sysadmin_test",
    "followup_roofer_test": "followup_roofer_test",
    "followup_curator_test": "followup_curator_test",
    "followup_drummer_test": "followup_drummer_test",
    "followup_plasterer_test": "followup_plasterer_test",
    "followup_dockworker_test": "followup_dockworker_test",
    "followup_skiinstructor_test": "followup_skiinstructor_test",
    "followup_vintner_test": "followup_vintner_test",
    "followup_upholsterer_test": "followup_upholsterer_test",
    "followup_tuktuk_test": "followup_tuktuk_test",
    "followup_smelter_test": "followup_smelter_test",
    "followup_shearer_test": "followup_shearer_test",
    "followup_harbourpilot_test": "followup_harbourpilot_test",
    "followup_boatbuilder_test": "followup_boatbuilder_test",
    "followup_cheesemaker_test": "followup_cheesemaker_test",
    "followup_restorer_test": "followup_restorer_test",
    "followup_lineman_test": "followup_lineman_test",
    "followup_toolmaker_test": "followup_toolmaker_test",
    "followup_tourguide_test": "followup_tourguide_test",
    "followup_glassblower_test": "followup_glassblower_test",
    "followup_ropemaker_test": "followup_ropemaker_test",
}


# name -> (memories file, questions file or "locomo", modes, how many questions, max tokens)
def plan(quick: bool, sets: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """What a run measures: each set's files, modes, question count and reply length."""
    if quick:  # bench-quick: 6 questions of one set, two modes, short replies
        return {
            "nurse_dev": {
                "memories": "nurse_dev",
                "questions": "nurse_dev",
                "modes": ["never", "local"],
                "limit": 6,
                "max_tokens": 40,
            }
        }
    full = {
        name: {"memories": name, "questions": name, "modes": list(ALL_MODES), "limit": None,
               "max_tokens": 64}
        for name in ("nurse_dev", "founder_dev", "teacher_test")
    }  # fmt: skip
    # Maths beside a persona's memories: do stored memories damage a worked answer?
    full["gsm8k"] = {
        "memories": "nurse_dev",
        "questions": "gsm8k_general",
        "modes": ["never", "always-no-cutoff", "local"],
        "limit": 20,
        "max_tokens": 200,
    }
    full["locomo"] = {
        "memories": None,
        "questions": "locomo",
        "modes": ["never", "always", "always-no-cutoff", "local"],
        "limit": 40,
        "max_tokens": 64,
    }
    # Conversations (issue 28): only the last turn of each is scored. The *_test sets are
    # held out: each scored once, by hand.
    for name, persona in FOLLOW_UP_SETS.items():
        full[name] = {"memories": persona, "questions": name,
                      "modes": ["never", "always", "local", "llm"], "limit": None,
                      "max_tokens": 64}  # fmt: skip
    chosen = sets or ["nurse_dev", "founder_dev", "gsm8k", "locomo"]
    return {name: full[name] for name in chosen}


def load_set(spec: dict[str, Any]) -> tuple[list[tuple[str, str]], list[Any]]:
    """The memories and questions of one planned set."""
    from assistant.eval.answer_data import balanced, read_locomo, read_memories, read_questions

    if spec["questions"] == "locomo":
        return read_locomo(LOCOMO, spec["limit"])
    memories = read_memories(ANSWERS / f"{spec['memories']}_memories.jsonl")
    questions = read_questions(ANSWERS / f"{spec['questions']}_questions.jsonl")
    return memories, balanced(questions, spec["limit"])


def _examples(rows: list[Any], n: int = 3) -> list[dict[str, Any]]:
    # What damage looks like, for the report: the first few damaged general replies.
    out = []
    for row in rows:
        if row.leaked and len(out) < n:
            out.append(
                {
                    "mode": row.mode,
                    "question": row.question,
                    "reply": row.reply[:300],
                    "why": row.leak_terms + row.boilerplate,
                }
            )
    return out


def _every_tenth(line: str) -> None:
    # A full run asks hundreds of questions: one line in ten on stderr says how far along.
    import re
    import sys

    done = re.match(r"\[(\d+)/(\d+)\]", line)
    if done and (int(done[1]) % 10 == 0 or done[1] == done[2]):
        print(f"  answers {line}", file=sys.stderr, flush=True)


def run(
    quick: bool = False,
    sets: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
    planned: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Start the built-in model once and measure every planned set on it."""
    from bench.local_model_bench import model_missing

    missing = model_missing()
    if missing:
        return {"skipped": missing}
    if progress is None:
        progress = _every_tenth
    # The app's no-key settings (the built-in model), whatever key this shell has; only
    # the gate's timeout may be raised, as in the real-local-model section.
    from assistant.config import Settings
    from assistant.eval.answer_data import DataError
    from assistant.eval.answers import evaluate, start_model

    started = time.perf_counter()
    try:
        model = start_model(Settings(gate_timeout=Settings.from_env().gate_timeout))
    except DataError as exc:
        return {"skipped": str(exc)}
    results: dict[str, Any] = {
        "model": model.model,
        "model_ready_s": round(time.perf_counter() - started, 1),
        "load_average_before": load_average(),
        "sets": {},
    }
    try:
        for name, spec in (planned or plan(quick, sets)).items():
            if spec["questions"] == "locomo" and not LOCOMO.exists():
                results["sets"][name] = {"skipped": f"{LOCOMO} not found"}
                continue
            memories, questions = load_set(spec)
            set_started = time.perf_counter()
            summary, rows = evaluate(
                memories,
                questions,
                spec["modes"],
                model,
                max_tokens=spec["max_tokens"],
                min_similarity=model.settings.min_similarity,
                progress=progress,
            )
            results["sets"][name] = {
                "memories": len(memories),
                "questions": len(questions),
                "max_tokens": spec["max_tokens"],
                "seconds": round(time.perf_counter() - set_started, 1),
                "modes": summary,
                "damaged_examples": _examples(rows),
            }
    finally:
        model.close()
    results["load_average_after"] = load_average()
    return results


def _fmt(value: float | None, pattern: str = "{:.2f}") -> str:
    return "-" if value is None else pattern.format(value)


def _table(modes: dict[str, Any]) -> list[str]:
    lines = table_head(
        "mode",
        "right, memory questions",
        "right, general questions",
        "damaged general replies",
        "boilerplate",
        "empty-search note read back",
        "speaks as the user",
        "failed open",
        "first token p50, general",
        "first token p50, memory",
        "memory tokens sent",
    )
    for mode, f in modes.items():
        lines.append(
            table_row(
                mode,
                _fmt(f["memory_accuracy"]),
                _fmt(f["general_accuracy"]),
                _fmt(f["leak_rate"]),
                _fmt(f["boilerplate_rate"]),
                _fmt(f.get("note_leak_rate")),
                _fmt(f.get("speaks_as_user_rate")),
                f["failed_open"],
                _fmt(f["first_token_p50_general_ms"], "{:,.0f} ms"),
                _fmt(f["first_token_p50_memory_ms"], "{:,.0f} ms"),
                f"{f['memory_tokens']:,}",
            )
        )
    return lines


def markdown(results: dict[str, Any], plots: Path, plot_name: str = "answers.png") -> str:
    """The report section: one table per set, the plot, and what the columns mean."""
    if "skipped" in results:
        return f"Not measured: {results['skipped']}"
    lines = [
        f"{results['model']} in llama.cpp on 127.0.0.1 (the app's no-key setup), ready in "
        f"{results['model_ready_s']:.1f} s; load average {results['load_average_before']} at "
        f"the start, {results['load_average_after']} at the end. Each question goes alone "
        "(no history) through the app's turn, gate -> search -> reply, in every mode (a "
        "conversation plays its earlier turns first, with history, and only its last turn "
        "is scored); the "
        "reply model samples greedily (temperature 0). Each mode asks every question in turn "
        "(`never` first): interleaved, a mode that sent the same memories right after another "
        "would reuse its prompt cache, and the first-token column would measure the order. "
        "`always-no-cutoff` retrieves the top 5 with no relevance cut-off, as mem0 does.",
        "",
    ]
    for name, data in results["sets"].items():
        if "skipped" in data:
            lines += [f"**{name}**: not measured ({data['skipped']}).", ""]
            continue
        lines += [
            f"**{name}**: {data['questions']} questions, {data['memories']} memories stored, "
            f"replies up to {data['max_tokens']} tokens ({data['seconds']:.0f} s):",
            "",
            *_table(data["modes"]),
            "",
        ]
        f1 = {m: f["f1"] for m, f in data["modes"].items() if "f1" in f}
        if f1:
            lines += [
                "LoCoMo token F1 (categories 1-4, LoCoMo's normalisation, no stemming): "
                + ", ".join(f"{m} **{v:.3f}**" for m, v in f1.items())
                + ". The papers prompt for a few-word answer; these are the app's own "
                "sentences, so precision, and F1, are lower for the same facts.",
                "",
            ]
        modes = data["modes"]
        if {"never", "local"} <= modes.keys():
            never = modes["never"]["first_token_p50_general_ms"]
            local = modes["local"]["first_token_p50_general_ms"]
            if never and local:
                lines += [
                    f"First token on general questions, `local` / `never`: "
                    f"**{local / never:.2f}x** (same run).",
                    "",
                ]
    plot(results["sets"], plots / plot_name)
    if (plots / plot_name).exists():
        lines += [f"![answers per gate mode]({plot_name})", ""]
    lines += [
        "Right: the reply contains a gold answer (case, accents, spacing and thousands "
        "separators ignored; whole tokens only; GSM8K: the reply's last number). Damaged: a "
        "reply to a question that needs no memory names something specific to a stored "
        "memory that neither the question nor its answer holds (a name, number, rare word or "
        "phrase that the `never` reply did not also use), or talks about memory, notes or "
        "'the user', or says it knows nothing about you. Boilerplate: any reply that talks "
        "about memory or notes. Speaks as the user: the reply echoes the question's 'my X' "
        "or 'I X' ('My brother lives in Cork'). Rules and tests: "
        "`assistant/eval/answer_score.py`, "
        "`tests/unit/test_answer_score.py`.",
    ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench answers --help`)."""
    parser.add_argument("--quick", action="store_true")
    # The follow-up sets are named from FOLLOW_UP_SETS, so a new set is added in one place.
    follow_ups = ", ".join(FOLLOW_UP_SETS)
    parser.add_argument(
        "--sets",
        help="comma-separated: nurse_dev,founder_dev,gsm8k,locomo,teacher_test, "
        f"{follow_ups} (the unseen sets: score them once)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the section (and plot) here")


def command(args: argparse.Namespace) -> int:
    """Run this section alone (optionally other sets); print JSON, write markdown."""
    import json
    import sys

    sets = [s.strip() for s in args.sets.split(",")] if args.sets else None
    results = run(args.quick, sets, progress=lambda line: print(line, file=sys.stderr))
    print(json.dumps(results, indent=2, default=str))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown(results, args.markdown.parent) + "\n")
    return 0
