"""Follow-up rewriting on CANARD: a resolver's standalone queries against human rewrites.

Data: `bench/data/canard_dev_sample.jsonl`, 500 rows of CANARD's dev split (CC BY-SA 4.0,
see NOTICE), or any CANARD file given with `--data` (the release's JSON array, or JSON
Lines). A row holds `History` (the Wikipedia article's title, the section's title, then
the earlier questions and answers), `Question` (the follow-up as asked) and `Rewrite`
(a person's standalone version of it).

The conversation goes to a resolver as `recent`, oldest first: `Said(user=title,
assistant=section)`, then `Said(user=question, assistant=answer)` per earlier exchange.

Resolvers, all scored in the same run:
- `copy`: the question unchanged (what a gate that reads the message alone searches);
- `concat`: the previous user turn, then the question;
- `ours`: `assistant.conversation.reading.read(message, recent).query`, imported only when asked
  for (and skipped with a note by the default run while that module does not exist).

Scores:
- **BLEU-4**, corpus level (Papineni et al. 2002): clipped n-gram precisions for n = 1..4,
  geometric mean with equal weights, brevity penalty, one reference, no smoothing, x100.
  Text is tokenised as mteval-v13a does, case-sensitive: what `multi-bleu-detok.perl` in
  the CANARD authors' repository computes. They ran spaCy's tokenizer over both sides
  first, so our figures on raw text may differ a little from theirs.
- **Term recall**: a row's *needed words* are the content words of the gold rewrite (not
  stopwords, not a lone letter) that are not in the question but are in the conversation:
  the words the rewrite had to bring from history. Term recall is the share of needed
  words, pooled over all rows, that the resolver's output contains (lower case, accents
  dropped, as the answer scorer reads text). `resolved` is the share of rows with needed
  words whose output holds all of them. Rows whose rewrite needs no word are left out.
- `changed`: share of outputs that differ from the question; for `ours`, how often it
  said `follow_up` on rows the person rewrote and on rows left as they were.
- p50 ms per call, measured in this run.

`python -m bench rewrite [--data PATH] [--resolver all|copy|concat|ours]
[--limit N] [--json]`.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.eval.answer_score import STOPWORDS, tokens
from bench.figures import table_head, table_row

DATA = Path(__file__).resolve().parent / "data"
SAMPLE = DATA / "canard_dev_sample.jsonl"
MULTIPLE_REFS = DATA / "canard_multiple_refs.json"
QUICK_ROWS = 100

# Published figures on CANARD, printed beside ours (BLEU-4 x100).
PUBLISHED: tuple[tuple[str, str, str], ...] = (
    (
        "pointer-generator seq2seq (the CANARD authors' trained model)",
        "dev 51.54, test 50.00",
        "github.com/aagohary/canard README @ da8639cee97a50b3c62dc4d7e800c93675731186; "
        "Elgohary, Peskov, Boyd-Graber, 'Can You Unpack That? Learning to Rewrite "
        "Questions-in-Context', EMNLP 2019",
    ),
)


@dataclass(frozen=True)
class Row:
    """One CANARD example: the conversation so far, the follow-up and its human rewrite."""

    title: str
    section: str
    exchanges: tuple[tuple[str, str], ...]  # earlier (question, answer) pairs, oldest first
    question: str
    rewrite: str


@dataclass(frozen=True)
class Rewrite:
    """A resolver's output: the standalone query, and whether it judged a follow-up."""

    query: str
    follow_up: bool | None = None


@dataclass(frozen=True)
class _Said:
    # The baselines' stand-in for assistant.conversation.said.Said: the same two fields they read.
    user: str
    assistant: str = ""


Resolve = Callable[[str, Sequence[Any]], Any]  # (message, recent) -> has .query


def read_rows(path: Path) -> list[Row]:
    """CANARD rows from the release's JSON array or from JSON Lines."""
    text = Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        raw = json.loads(text)
    else:
        raw = [json.loads(line) for line in text.splitlines() if line.strip()]
    rows = []
    for number, item in enumerate(raw, 1):
        history = list(item["History"])
        if len(history) < 2 or len(history) % 2:
            raise ValueError(
                f"{path}, row {number}: History must be title, section, then Q/A pairs"
            )
        pairs = tuple(zip(history[2::2], history[3::2], strict=True))
        rows.append(Row(history[0], history[1], pairs, item["Question"], item["Rewrite"]))
    return rows


def recent_of(row: Row, said: Callable[..., Any] = _Said) -> list[Any]:
    """The conversation before the follow-up as `said(user, assistant)` records, oldest first."""
    return [said(user=row.title, assistant=row.section)] + [
        said(user=q, assistant=a) for q, a in row.exchanges
    ]


def copy_resolver(message: str, recent: Sequence[Any]) -> Rewrite:
    """Baseline: the question as asked."""
    return Rewrite(message)


def concat_resolver(message: str, recent: Sequence[Any]) -> Rewrite:
    """Baseline: the previous user turn, then the question."""
    previous = recent[-1].user if recent else ""
    return Rewrite(f"{previous} {message}".strip())


def ours() -> tuple[Resolve, Callable[..., Any]]:
    """The project's reading of a follow-up and its Said record, imported on first use."""
    from assistant.conversation.reading import read
    from assistant.conversation.said import Said

    return read, Said


# ---- BLEU-4 -------------------------------------------------------------------------------

_PUNCT = re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])")


def tokenize_13a(text: str) -> list[str]:
    """mteval-v13a's tokenisation (as in multi-bleu-detok.perl), case kept."""
    text = text.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    text = text.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
    text = text.replace("&gt;", ">")
    text = _PUNCT.sub(r" \1 ", f" {text} ")
    text = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", text)
    text = re.sub(r"([\.,])([^0-9])", r" \1 \2", text)
    text = re.sub(r"([0-9])(-)", r"\1 \2 ", text)
    return text.split()


def _ngrams(words: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


@dataclass(frozen=True)
class Bleu:
    """Corpus BLEU-4 with its parts, x100 like the published tables."""

    score: float
    precisions: tuple[float, ...]
    brevity_penalty: float
    hyp_len: int
    ref_len: int


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> Bleu:
    """Corpus-level BLEU-4 of hypotheses against one reference each (13a tokens)."""
    if len(hypotheses) != len(references):
        raise ValueError("one reference per hypothesis")
    correct, total = [0] * 4, [0] * 4
    hyp_len = ref_len = 0
    for hyp, ref in zip(hypotheses, references, strict=True):
        h, r = tokenize_13a(hyp), tokenize_13a(ref)
        hyp_len, ref_len = hyp_len + len(h), ref_len + len(r)
        for n in range(1, 5):
            hyp_grams, ref_grams = _ngrams(h, n), _ngrams(r, n)
            total[n - 1] += sum(hyp_grams.values())
            correct[n - 1] += sum(min(c, ref_grams[g]) for g, c in hyp_grams.items())
    precisions = tuple(c / t if t else 0.0 for c, t in zip(correct, total, strict=True))
    if not hyp_len or min(precisions) == 0:
        return Bleu(0.0, tuple(100 * p for p in precisions), 0.0, hyp_len, ref_len)
    bp = 1.0 if hyp_len >= ref_len else math.exp(1 - ref_len / hyp_len)
    score = bp * math.exp(sum(math.log(p) for p in precisions) / 4)
    return Bleu(100 * score, tuple(100 * p for p in precisions), bp, hyp_len, ref_len)


# ---- term recall --------------------------------------------------------------------------


def content_words(text: str) -> list[str]:
    """The text's words that carry content: not stopwords, not a lone letter ("'s")."""
    return [
        w for w in dict.fromkeys(tokens(text)) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())
    ]


def needed_words(question: str, rewrite: str, history: Iterable[str]) -> list[str]:
    """The rewrite's content words absent from the question but present in the history."""
    asked = set(tokens(question))
    said = {w for text in history for w in tokens(text)}
    return [w for w in content_words(rewrite) if w not in asked and w in said]


@dataclass(frozen=True)
class TermRecall:
    """Needed words found in the outputs, pooled, and rows whose needed words all were."""

    found: int
    needed: int
    rows_resolved: int
    rows: int

    @property
    def recall(self) -> float:
        """Share of needed words the outputs contain."""
        return self.found / self.needed if self.needed else 0.0

    @property
    def resolved(self) -> float:
        """Share of rows needing words whose output holds every one of them."""
        return self.rows_resolved / self.rows if self.rows else 0.0


def term_recall(outputs: Sequence[str], needs: Sequence[Sequence[str]]) -> TermRecall:
    """How many of each row's needed words its output contains."""
    found = needed = rows_resolved = rows = 0
    for output, words in zip(outputs, needs, strict=True):
        if not words:
            continue
        have = set(tokens(output))
        hits = sum(w in have for w in words)
        found, needed, rows = found + hits, needed + len(words), rows + 1
        rows_resolved += hits == len(words)
    return TermRecall(found, needed, rows_resolved, rows)


def history_texts(row: Row) -> list[str]:
    """Every utterance before the follow-up, titles first."""
    return [row.title, row.section] + [t for pair in row.exchanges for t in pair]


# ---- the run ------------------------------------------------------------------------------


def score(
    rows: Sequence[Row], resolve: Resolve, said: Callable[..., Any] = _Said
) -> dict[str, Any]:
    """One resolver over the rows: BLEU-4, term recall, changes, follow-up calls, p50 ms."""
    outputs, flags, times = [], [], []
    for row in rows:
        recent = recent_of(row, said)
        start = time.perf_counter()
        result = resolve(row.question, recent)
        times.append(1000 * (time.perf_counter() - start))
        outputs.append(str(result.query))
        flags.append(getattr(result, "follow_up", None))
    bleu = corpus_bleu(outputs, [r.rewrite for r in rows])
    needs = [needed_words(r.question, r.rewrite, history_texts(r)) for r in rows]
    recall = term_recall(outputs, needs)
    rewritten = [r.question.strip() != r.rewrite.strip() for r in rows]
    changed = [o.strip() != r.question.strip() for o, r in zip(outputs, rows, strict=True)]
    out: dict[str, Any] = {
        "rows": len(rows),
        "bleu4": round(bleu.score, 2),
        "precisions": [round(p, 1) for p in bleu.precisions],
        "brevity_penalty": round(bleu.brevity_penalty, 3),
        "length_ratio": round(bleu.hyp_len / bleu.ref_len, 3) if bleu.ref_len else 0.0,
        "term_recall": round(recall.recall, 3),
        "resolved": round(recall.resolved, 3),
        "needed_words": recall.needed,
        "rows_needing_words": recall.rows,
        "changed": round(sum(changed) / len(rows), 3),
        "p50_ms": round(statistics.median(times), 3),
        "examples": [
            {"question": r.question, "gold": r.rewrite, "output": o}
            for r, o in zip(rows[:5], outputs[:5], strict=True)
        ],
    }
    if any(f is not None for f in flags):
        pairs = list(zip(flags, rewritten, strict=True))
        on_rewritten = [bool(f) for f, w in pairs if w]
        on_kept = [bool(f) for f, w in pairs if not w]
        out["follow_up_on_rewritten"] = round(sum(on_rewritten) / max(len(on_rewritten), 1), 3)
        out["follow_up_on_unchanged"] = round(sum(on_kept) / max(len(on_kept), 1), 3)
    return out


def human_agreement(path: Path = MULTIPLE_REFS) -> dict[str, Any] | None:
    """BLEU-4 of one crowd worker's rewrite against another's, on CANARD's 100 doubly written."""
    if not Path(path).exists():
        return None
    pairs = json.loads(Path(path).read_text(encoding="utf-8"))
    bleu = corpus_bleu([b for _, b in pairs], [a for a, _ in pairs])
    return {"pairs": len(pairs), "bleu4": round(bleu.score, 2)}


def resolvers(choice: str) -> dict[str, tuple[Resolve, Callable[..., Any]] | str]:
    """The resolvers to run: a (resolve, said) pair each, or why one could not be loaded."""
    found: dict[str, tuple[Resolve, Callable[..., Any]] | str] = {}
    if choice in ("all", "copy"):
        found["copy"] = (copy_resolver, _Said)
    if choice in ("all", "concat"):
        found["concat"] = (concat_resolver, _Said)
    if choice in ("all", "ours"):
        try:
            found["ours"] = ours()
        except ImportError as exc:
            if choice == "ours":
                raise
            # The default run still gives the baselines before the resolver exists.
            found["ours"] = f"not run: {type(exc).__name__}: {exc}"
    return found


def run(
    quick: bool = False, data: Path = SAMPLE, choice: str = "all", limit: int | None = None
) -> dict[str, Any]:
    """Every chosen resolver on the same rows, with the human agreement and published figures."""
    rows = read_rows(data)
    if quick and not limit:
        limit = QUICK_ROWS
    if limit:
        rows = rows[:limit]
    results: dict[str, Any] = {}
    for name, found in resolvers(choice).items():
        results[name] = found if isinstance(found, str) else score(rows, *found)
    return {
        "data": str(Path(data).name),
        "rows": len(rows),
        "rows_rewritten": sum(r.question.strip() != r.rewrite.strip() for r in rows),
        "resolvers": results,
        "human_agreement": human_agreement(),
        "published": [list(p) for p in PUBLISHED],
    }


def markdown(results: dict[str, Any], plots_dir: Path | None = None) -> str:
    """The results as a table, with the published figures and their sources."""
    lines = [
        f"CANARD ({results['data']}, {results['rows']} follow-ups, "
        f"{results['rows_rewritten']} rewritten by a person). BLEU-4 x100, corpus level, "
        "13a tokens; term recall = share of the words a rewrite had to bring from the "
        "conversation that the output holds.",
        "",
        *table_head("resolver", "BLEU-4", "term recall", "all needed words", "changed", "p50 ms"),
    ]
    for name, res in results["resolvers"].items():
        if isinstance(res, str):
            lines.append(table_row(name, res, *[""] * 4))
            continue
        figures = (f"{res[k]:.3f}" for k in ("term_recall", "resolved", "changed", "p50_ms"))
        lines.append(table_row(name, f"{res['bleu4']:.2f}", *figures))
    human = results.get("human_agreement")
    if human:
        lines.append(
            table_row(
                f"one person vs another ({human['pairs']} questions written twice)",
                f"{human['bleu4']:.2f}",
                *[""] * 4,
            )
        )
    lines += ["", "Published:"]
    lines += [
        f"- {what}: BLEU-4 {value} ({source})" for what, value, source in results["published"]
    ]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench rewrite --help`)."""
    parser.add_argument("--data", type=Path, default=SAMPLE, help="CANARD JSON or JSONL")
    parser.add_argument("--resolver", choices=("all", "copy", "concat", "ours"), default="all")
    parser.add_argument("--limit", type=int, default=None, help="first N rows only")
    parser.add_argument("--quick", action="store_true", help=f"first {QUICK_ROWS} rows")
    parser.add_argument("--json", action="store_true")


def command(args: argparse.Namespace) -> int:
    """Print the table (or JSON) for the chosen resolvers."""
    results = run(args.quick, args.data, args.resolver, args.limit)
    print(json.dumps(results, indent=2) if args.json else markdown(results), end="")
    return 0
