"""The evaluations: `python -m assistant.eval recall|gate|load|answers` (`memory-gate eval`).

- `recall`: memory recall@k on a memory + question set;
- `gate_eval`: a gate's accuracy, recall and latency on labelled messages;
- `load`: concurrent offline sessions through the turn: turns/s, p50/p95, errors;
- `answers` (with `answer_data`, `answer_run`, `answer_score`, `answer_match`,
  `answer_report`, `locomo_f1`): replies per gate mode: right, damaged, first token;
- `local_server`: the built-in model started for an evaluation or a benchmark;
- `stats`: summary statistics shared with the benchmarks.

May import every layer below it (the turn and all under it, and `memory`); never the
page's helpers or the talk (its siblings), nor the command line. Nothing is imported here.
"""
