"""The benchmarks: `python -m bench <command> [options]`, or `python -m bench` for all of them.

Each command's module exposes `add_arguments(parser)` (its options; optional) and
`command(args) -> int`. A module that is also a section of the report (`python -m bench
all`) exposes `run(quick) -> dict` and `markdown(results, plots_dir) -> str` as well. Every
table, latency summary, load figure and plot is written with bench/figures.py, so the
sections of docs/benchmarks.md read alike.
"""

from __future__ import annotations

# command -> (module, what it measures); `all` writes docs/benchmarks.md from the sections.
COMMANDS: dict[str, tuple[str, str]] = {
    "all": ("bench.report", "every section; writes docs/benchmarks.md (the default)"),
    "pipeline": ("bench.pipeline_bench", "gate latency per mode, LLM overhead, per-turn cost"),
    "gate-report": ("bench.gate_report", "gate accuracy, recall and skip rate per source"),
    "corrections": ("bench.corrections_bench", "rewordings fixed, others unchanged, cost"),
    "memory": ("bench.memory_bench", "search vs store size, embeddings, LoCoMo"),
    "app": ("bench.app_bench", "app cold start until the chat input is usable in Chromium"),
    "burst": ("bench.burst_bench", "messages sent in bursts: none lost, in Chromium"),
    "local-model": ("bench.local_model_bench", "the built-in model: gates and replies"),
    "llm-gate": ("bench.llm_gate_bench", "the LLM gate on the built-in model: grammar, cascade"),
    "answers": ("bench.answers_bench", "replies per gate mode: right, damaged, first token"),
    "followups": ("bench.followup_bench", "conversations: last turns, the mechanism, CANARD"),
    "followup-retrieval": ("bench.followup_retrieval", "what a follow-up is given, no model"),
    "followup-ceiling": ("bench.followup_ceiling", "follow-ups sent only the right notes"),
    "followup-llm-cost": ("bench.followup_llm_cost", "the LLM gate reading the conversation"),
    "rewrite": ("bench.rewrite_bench", "the follow-up resolver against CANARD's rewrites"),
    "compare": ("bench.compare_bench", "compare mode: twins' first-token ratio"),
    "injection": ("bench.injection_bench", "memory is data: attack success, defences off / on"),
    "first-answer": ("bench.first_answer", "time to a first real answer on a fresh clone"),
    "answer-retrieval": ("bench.answer_retrieval", "what the answer sets' questions retrieve"),
    "merge": ("bench.merge_bench", "merge pairs: same fact merged, others kept apart"),
    "keyword-index": ("bench.keyword_index", "the keyword index: recall, sizes, timings"),
    "calibrate-llm-gate": ("bench.calibrate_llm_gate", "fit and save the LLM gate's trust"),
    "tune-hybrid": ("bench.tune_hybrid", "grid of text formats x fusion settings on LoCoMo"),
    "tune-threshold": ("bench.tune_threshold", "the store's relevance cut-off trade-off"),
    "screenshot": ("bench.screenshot", "redraw docs/screenshot.png in headless Chromium"),
}
