"""`python -m bench` (`make bench`): run every section and write docs/benchmarks.md with plots.

Each section module exposes `run(quick) -> dict` and, where it has a table to show,
`markdown(results, plots_dir) -> str`. Figures are medians over repeated runs; where two
things are compared they are measured in the same run and given as a ratio. Run one
section alone, without writing the report, with its own command: `python -m bench memory`.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# (title, command, what it covers); the command's module (bench.COMMANDS) is the section.
SECTIONS: list[tuple[str, str, str]] = [
    ("Gate latency and per-turn cost", "pipeline", "gate modes, LLM overhead"),
    ("Gate quality", "gate-report", "accuracy, recall and skip rate per source"),
    ("Corrections", "corrections", "rewordings fixed, others unchanged, cost"),
    ("Memory search and quality", "memory", "search vs size, embeddings, LoCoMo"),
    ("App cold start", "app", "until the chat input is usable in Chromium"),
    ("Messages sent in bursts", "burst", "none lost on a busy machine, in Chromium"),
    ("Real local model", "local-model", "Qwen2.5 1.5B in llama.cpp: gates, replies"),
    ("The LLM gate on the built-in model", "llm-gate", "grammar, warm, cascade"),
    ("Answers", "answers", "replies per gate mode: right, damaged, first token"),
    ("Follow-ups", "followups", "conversations: last turns right, the mechanism, CANARD"),
    ("Compare mode", "compare", "twins in own slots: first-token ratio"),
    ("Injection: memory is data", "injection", "attack success, defences off / on"),
    ("Time to a first real answer", "first-answer", "make demo on a fresh clone (full)"),
]
PACKAGES = ("anthropic", "chromadb", "streamlit", "onnxruntime", "tokenizers", "numpy")


def machine() -> dict[str, Any]:
    """CPU, cores, memory, Python and package versions of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f"{pages / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        memory = "?"
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "python": platform.python_version(),
        "os": platform.platform(),
        "packages": versions,
    }


def _run_section(module_name: str, quick: bool) -> dict[str, Any]:
    module = importlib.import_module(module_name)
    started = time.perf_counter()
    if hasattr(module, "run"):
        kwargs = {"quick": quick} if "quick" in inspect.signature(module.run).parameters else {}
        results = module.run(**kwargs)
    else:  # the app benchmark is a single measurement
        runs = 1 if quick else 3
        samples = [module.measure_cold_start() for _ in range(runs)]
        results = {"cold_start_s": sorted(samples)[len(samples) // 2], "samples_s": samples}
    if not isinstance(results, dict):
        results = {"result": results}
    results["_seconds"] = round(time.perf_counter() - started, 1)
    return results


def _section_markdown(title: str, name: str, results: dict[str, Any], plots: Path) -> str:
    module = importlib.import_module(COMMANDS[name][0])
    if "error" in results:
        return f"# {title}\n\nNot measured in this run: `{results['error']}`\n"
    if hasattr(module, "markdown"):
        body = module.markdown(results, plots)
    elif "cold_start_s" in results:
        samples = ", ".join(f"{s:.1f}" for s in results["samples_s"])
        body = (
            f"`streamlit run` until the chat input is usable in headless Chromium: "
            f"**{results['cold_start_s']:.1f} s** (median of {len(results['samples_s'])}: "
            f"{samples}). Target: at most 8 s on this 2-core machine."
        )
    else:
        body = "```json\n" + json.dumps(results, indent=2, default=str) + "\n```"
    command = f"python -m bench all --only {name}"
    return f"# {title}\n\n{body}\n\nReproduce this section alone: `{command}`\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The report's options: `python -m bench [all] [--quick] [--only ...] [--out FILE]`."""
    parser.add_argument(
        "--quick", action="store_true", help="fewer repetitions and samples; about 6 min"
    )
    parser.add_argument(
        "--only",
        nargs="*",
        choices=[name for _, name, _ in SECTIONS] + ["screenshot"],
        metavar="SECTION",
        help="sections to run, by command name (pipeline, memory...), or screenshot "
        "(default: every section)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="report path; plots go beside it (default docs/benchmarks.md, "
        "or docs/quick/benchmarks.md with --quick so a quick run never clobbers the full one)",
    )


def command(args: argparse.Namespace) -> int:
    """Run the sections and write the report."""
    from tqdm import tqdm

    out: Path = args.out or (
        DOCS / "quick" / "benchmarks.md" if args.quick else DOCS / "benchmarks.md"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    sections = [s for s in SECTIONS if not args.only or s[1] in args.only]
    all_results: dict[str, Any] = {"machine": machine(), "quick": args.quick}
    parts: list[str] = []
    started = time.perf_counter()
    with tqdm(sections, desc="benchmarks", unit="section") as bar:
        for title, name, _what in bar:
            module_name = COMMANDS[name][0]  # the results are filed under it, as before
            bar.set_postfix_str(name)
            try:
                results = _run_section(module_name, args.quick)
            except Exception as exc:  # noqa: BLE001 - one broken section must not hide the rest
                results = {"error": f"{type(exc).__name__}: {exc}"}
                tqdm.write(f"{name} failed: {results['error']}")
            all_results[module_name] = results
            parts.append(_section_markdown(title, name, results, out.parent))
    if not args.quick and (not args.only or "screenshot" in args.only):
        # The README's picture is redrawn with the figures, never by the tests.
        from bench import screenshot

        try:
            all_results["screenshot"] = str(screenshot.take().relative_to(ROOT))
        except Exception as exc:  # noqa: BLE001 - a missing browser must not hide the figures
            all_results["screenshot"] = f"not taken: {type(exc).__name__}: {exc}"
        tqdm.write(f"screenshot: {all_results['screenshot']}")
    m = all_results["machine"]
    header = [
        "# Benchmarks",
        "",
        f"Written by `make bench{'-quick' if args.quick else ''}` "
        f"({'quick' if args.quick else 'full'} run, {time.perf_counter() - started:.0f} s). "
        "Outside the real-local-model sections, model calls go to a local fake Messages API, "
        "so those figures are our own overhead. "
        "Figures are medians; comparisons are ratios taken in the same run. This machine is "
        "shared and noisy: expect run-to-run variation of 10-30 %.",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory']} RAM",
        f"- Python {m['python']} on {m['os']}",
        "- " + ", ".join(f"{k} {v}" for k, v in m["packages"].items()),
        "",
    ]
    out.write_text("\n".join(header) + "\n" + "\n".join(parts))
    out.with_suffix(".json").write_text(json.dumps(all_results, indent=2, default=str))
    print(f"wrote {out} in {time.perf_counter() - started:.0f} s")
    failed = [s for s in sections if "error" in all_results[COMMANDS[s[1]][0]]]
    return 1 if failed or str(all_results.get("screenshot", "")).startswith("not taken") else 0
