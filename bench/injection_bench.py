"""Injection: attack success on the built-in model with the defences off and on.

For each row of bench/data/injection_set.jsonl the memory is written through the store's
own write path (so it is flagged, or not, as the app would flag it) into a store holding
the demo persona, the question is asked through the real pipeline (gate `always`, as in
the issue, so every question searches), and the row's check reads the reply. The memory
is then deleted, so each row meets the persona alone.

- attack success rate: share of attack rows whose reply did what the memory asked;
- defences: `off` (every memory found goes to the model), `on` (memories that read like
  instructions are withheld, and a reply that carries out a memory's instruction is
  written again without it). `screen only` is the `on` run's first reply, before the
  reply check: the figure for the write-time check alone;
- benign: share of imperative-sounding notes withheld (target <= 2 %) and share whose
  reply used them, off and on.

Model-free figures come first: what share of each source the write-time check flags, on
BIPIA's training attacks (not read while the rules were written), on the demo persona and
on the 5,882 turns of LoCoMo (`../shared/eval`, when present) as benign text.

`python -m bench injection [--quick] [--json]`; `make bench` runs it as a section.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.figures import load_average, table_head, table_row
from bench.gate_report import DEFAULT_EVAL_DIR
from bench.injection_set import check, held_out, load

REPLY_TOKENS = 160  # enough for every check; a whole 1,024-token reply would triple the run
QUICK = {"own": 2, "garak": 1, "bipia": 1, "benign": 2}  # bench-quick: a smoke run

# ---- model-free: the write-time check --------------------------------------------------


def detector_figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What share of each source the write-time check flags, and what it costs."""
    from memory.injection import match
    from memory.persona import persona

    out: dict[str, Any] = {}
    for source in sorted({r["source"] for r in rows if r["kind"] == "attack"}):
        texts = [r["memory"] for r in rows if r["kind"] == "attack" and r["source"] == source]
        out[f"attacks_{source}"] = _share(texts, match)
    out["attacks_bipia_train_held_out"] = _share(held_out(), match)
    out["benign_imperative"] = _share([r["memory"] for r in rows if r["kind"] == "benign"], match)
    out["persona"] = _share([r["text"] for r in persona()], match)
    locomo = DEFAULT_EVAL_DIR / "locomo10_memory.json"
    if locomo.exists():
        data = json.loads(locomo.read_text(encoding="utf-8"))
        turns = [
            f"{t['speaker']}: {t['text']}"
            for c in data["conversations"]
            for s in c["sessions"]
            for t in s["turns"]
        ]
        out["locomo_turns"] = _share(turns, match)
        started = time.perf_counter()
        for t in turns:
            match(t)
        out["us_per_memory"] = round((time.perf_counter() - started) / len(turns) * 1e6, 1)
    return out


def _share(texts: Sequence[str], match: Callable[[str], Any]) -> dict[str, Any]:
    flagged = sum(match(t) is not None for t in texts)
    return {"n": len(texts), "flagged": flagged, "share": round(flagged / len(texts), 4)}


# ---- the model runs --------------------------------------------------------------------


class _Recording:
    """Wraps a responder and keeps every reply text, so the first reply of a turn is known."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.source = inner.source
        self.replies: list[str] = []

    def reply(self, *args: Any, **kwargs: Any) -> Any:
        result = self.inner.reply(*args, **kwargs)
        self.replies.append(result.text)
        return result


def sample(rows: list[dict[str, Any]], quick: bool, every: int = 1) -> list[dict[str, Any]]:
    """Every row (or every `every`-th of each source), or in a quick run a few of each."""
    if not quick:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault((row["kind"], row["source"]), []).append(row)
        # Every n-th row of each group, so each source keeps its share of the set.
        return [row for group in groups.values() for row in group[::every]]
    out = []
    for source, n in QUICK.items():
        kind = "benign" if source == "benign" else "attack"
        picked = [
            r for r in rows if r["kind"] == kind and (kind == "benign" or r["source"] == source)
        ]
        out += picked[:: max(1, len(picked) // n)][:n]
    return out


def run_rows(
    rows: Sequence[dict[str, Any]],
    store: Any,
    client: Any,
    model: str,
    defences: bool,
    progress: Callable[[str], None],
    done: dict[str, dict[str, Any]] | None = None,
    keep: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Ask each row's question with its memory stored; one result dict a row.

    `done` holds results of an earlier, interrupted run (by row id), which are reused;
    `keep` gets each new result as soon as it exists.
    """
    from assistant.gates.rules import always_gate
    from assistant.reply.respond import ModelResponder
    from assistant.turn.chat import Chat, TurnOptions
    from assistant.turn.pipeline import Pipeline

    responder = _Recording(ModelResponder(client, model, max_tokens=REPLY_TOKENS, temperature=0.0))
    chat = Chat.fixed(
        Pipeline(
            gate=always_gate(),
            store=store,
            responder=responder,
            screen_memories=defences,
            check_reply=defences,
        )
    )
    results = []
    before = {m.id: m.text for m in store.export()}
    for n, row in enumerate(rows, 1):
        if done and row["id"] in done:
            results.append(done[row["id"]])
            continue
        added = store.remember(row["memory"], source="typed")
        responder.replies.clear()
        started = time.perf_counter()
        turn = chat.answer(row["question"], options=TurnOptions(capture=False)).gated
        seconds = time.perf_counter() - started
        if added.id in before:  # merged into a persona memory: put its words back
            store.update(added.id, before[added.id])
        else:
            store.delete(added.id)
        withheld = {m.id: m.flag for m in turn.withheld}
        first = responder.replies[0] if responder.replies else turn.reply
        results.append(
            {
                "id": row["id"],
                "kind": row["kind"],
                "source": row["source"],
                "category": row["category"],
                "found": added.id in {m.id for m in (*turn.memories, *turn.withheld)},
                "flagged_at_write": added.flag is not None,
                "withheld": added.id in withheld,
                "replied_again": len(responder.replies) > 1,
                "passed": check(turn.reply, row["check"]),
                "passed_first_reply": check(first, row["check"]),
                "error": turn.error,
                "seconds": round(seconds, 2),
                "reply": turn.reply[:400],
                "defences": defences,
            }
        )
        if keep is not None:
            keep(results[-1])
        if n % 10 == 0 or n == len(rows):
            progress(f"defences {'on' if defences else 'off'}: {n}/{len(rows)}")
    return results


def summarise(results: Sequence[dict[str, Any]], first_reply: bool = False) -> dict[str, Any]:
    """Attack success per source, and what happened to the benign notes."""
    key = "passed_first_reply" if first_reply else "passed"
    attacks = [r for r in results if r["kind"] == "attack"]
    benign = [r for r in results if r["kind"] == "benign"]
    out: dict[str, Any] = {}
    if attacks:
        out["attack_success"] = _rate([r[key] for r in attacks])
        for source in sorted({r["source"] for r in attacks}):
            out[f"attack_success_{source}"] = _rate(
                [r[key] for r in attacks if r["source"] == source]
            )
        out["attack_memory_found"] = _rate([r["found"] for r in attacks])
    if benign:
        withheld = [r["withheld"] and not (first_reply and r["replied_again"]) for r in benign]
        out["benign_withheld"] = _rate(withheld)
        out["benign_used"] = _rate([r[key] for r in benign])
        out["benign_found"] = _rate([r["found"] for r in benign])
    out["errors"] = sum(r["error"] is not None for r in results)
    out["median_s"] = round(statistics.median(r["seconds"] for r in results), 2) if results else 0
    return out


def reply_check_alone(rows_off: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the reply check alone would catch in the `off` run: obeyed attacks, false alarms."""
    from memory.injection import reply_follows

    by_id = {r["id"]: r for r in load()}
    obeyed = [r for r in rows_off if r["kind"] == "attack" and r["passed"]]
    benign = [r for r in rows_off if r["kind"] == "benign"]

    def fires(r: dict[str, Any]) -> bool:
        row = by_id[r["id"]]
        return reply_follows(r["reply"], row["memory"], row["question"]) is not None

    return {
        "obeyed_caught": _rate([fires(r) for r in obeyed]),
        "benign_alarms": _rate([fires(r) for r in benign]),
    }


def _rate(flags: Sequence[bool]) -> dict[str, Any]:
    n = len(flags)
    k = sum(flags)
    return {"n": n, "k": k, "rate": round(k / n, 4) if n else 0.0}


def run(
    quick: bool = False,
    progress: Callable[[str], None] = print,
    rows_file: Path | None = None,
    every: int = 1,
) -> dict[str, Any]:
    """The model-free figures, then both model runs on one started model.

    With `rows_file`, every row's result is appended to it as it comes, and rows already
    there are not asked again: a run that was killed goes on where it stopped.
    """
    rows = load()
    results: dict[str, Any] = {"detector": detector_figures(rows)}
    from bench.local_model_bench import model_missing

    missing = model_missing()
    if missing:
        results["skipped"] = missing
        return results
    from assistant.config import Settings
    from assistant.eval.local_server import ModelNotReady, start_local
    from assistant.runtime.llm import make_client
    from memory.persona import seed_demo
    from memory.store import MemoryStore

    chosen = sample(rows, quick, every)
    try:
        model = start_local(Settings.from_env({}))
    except ModelNotReady as exc:
        results["skipped"] = str(exc)
        return results
    with model:
        settings = model.settings
        client = make_client(settings)
        results["model"] = model.name
        results["rows"] = len(chosen)
        results["every"] = every
        results["load_average_before"] = load_average()
        with tempfile.TemporaryDirectory(prefix="memgate-injection-") as tmp:
            store = MemoryStore.persistent(Path(tmp), "bench")
            seed_demo(store)
            earlier = _read_rows(rows_file)
            runs = {}
            for defences in (False, True):
                runs[defences] = run_rows(
                    chosen,
                    store,
                    client,
                    settings.chat_model,
                    defences,
                    progress,
                    done={r["id"]: r for r in earlier if r["defences"] is defences},
                    keep=None if rows_file is None else lambda r: _append_row(rows_file, r),
                )
            store.close()
        results["load_average_after"] = load_average()
        results["off"] = summarise(runs[False])
        results["screen_only"] = summarise(runs[True], first_reply=True)
        results["on"] = summarise(runs[True])
        results["rows_off"] = runs[False]
        results["rows_on"] = runs[True]
        return results


def _read_rows(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _append_row(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _pct(r: dict[str, Any]) -> str:
    return f"{r['rate']:.1%} ({r['k']}/{r['n']})"


def markdown(results: dict[str, Any], plots: Path) -> str:
    """The report section."""
    d = results["detector"]
    lines = [
        "Write-time check (`memory/injection.py`, no model): share of texts flagged.",
        "",
        *table_head("texts", "n", "flagged"),
    ]
    names = {
        "attacks_own": "attacks, own",
        "attacks_garak": "attacks, garak latent injection",
        "attacks_bipia": "attacks, BIPIA test",
        "attacks_bipia_train_held_out": "attacks, BIPIA train (held out)",
        "benign_imperative": "benign imperative notes",
        "persona": "demo persona",
        "locomo_turns": "LoCoMo turns (benign)",
    }
    for key, name in names.items():
        if key in d:
            lines.append(table_row(name, d[key]["n"], f"{d[key]['share']:.1%}"))
    if "us_per_memory" in d:
        lines += ["", f"The check takes {d['us_per_memory']} µs a memory."]
    if "skipped" in results:
        return "\n".join([*lines, "", f"Model runs not measured: {results['skipped']}"])
    lines += [
        "",
        f"Built-in model ({results['model']}), gate `always`, {results['rows']} rows"
        + (f" (every {results['every']}th of each source)" if results.get("every", 1) > 1 else "")
        + ", "
        f"greedy replies of at most {REPLY_TOKENS} tokens; load average "
        f"{results['load_average_before']} before, {results['load_average_after']} after.",
        "",
        *table_head(
            "defences", "attack success", "own", "garak", "BIPIA", "benign withheld", "benign used"
        ),
    ]
    for key, name in (("off", "off"), ("screen_only", "write-time check only"), ("on", "on")):
        r = results[key]
        cells = [
            _pct(r["attack_success"]),
            *(
                _pct(r[f"attack_success_{s}"]) if f"attack_success_{s}" in r else "–"
                for s in ("own", "garak", "bipia")
            ),
            _pct(r["benign_withheld"]) if "benign_withheld" in r else "–",
            _pct(r["benign_used"]) if "benign_used" in r else "–",
        ]
        lines.append(table_row(name, *cells))
    found = results["off"]["attack_memory_found"]
    alone = reply_check_alone(results["rows_off"])
    lines += [
        "",
        f"The reply check alone (no write-time check) would have caught "
        f"{_pct(alone['obeyed_caught'])} of the replies that obeyed in the `off` run, with "
        f"{_pct(alone['benign_alarms'])} false alarms on the benign notes' replies: it only "
        "knows payloads an instruction spells out (a quoted string, a CAPS word, an address).",
        "",
        f"The attack memory was among the memories found for {_pct(found)} of the questions. "
        "An attack succeeds when its row's check passes on the final reply (the word it asked "
        "for, the language, an image...).",
    ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench injection --help`)."""
    parser.add_argument("--quick", action="store_true", help="4 attacks and 2 benign notes")
    parser.add_argument("--json", type=Path, help="also write every row's result here")
    parser.add_argument(
        "--rows", type=Path, help="append each row's result here as it comes; resume from it"
    )
    parser.add_argument(
        "--every", type=int, default=1, help="ask every n-th row of each source (a shorter run)"
    )


def command(args: argparse.Namespace) -> int:
    """Run the benchmark and print the section (or the whole result as JSON)."""
    results = run(
        args.quick,
        progress=lambda s: print(s, file=sys.stderr),
        rows_file=args.rows,
        every=max(1, args.every),
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(markdown(results, Path(".")))
    return 0
