"""Time to a first real answer: `make demo` on a fresh clone, until the local model answers.

    python -m bench first-answer

Clones this checkout's committed HEAD into a temporary folder and runs the README's demo
command there, with an empty cache (XDG_CACHE_HOME), so the venv is created and installed
from the registries and the model is assembled from its installed parts, as on a new
machine. Then headless Chromium opens the page and sends one message; the clock stops when
the local model's reply has finished streaming. Slow (minutes): the full bench runs it,
`--quick` skips it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.figures import table_head, table_row

ROOT = Path(__file__).resolve().parent.parent
MESSAGE = "Tell me a joke."
GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SETUP_TIMEOUT_S = 900.0
ANSWER_TIMEOUT_S = 300.0
KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN")
MODEL_READY_LINE = "init: listening on"  # llama.cpp's own log, once the model is loaded


def _env(cache: Path, memory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.startswith("MEMGATE_")}
    env["XDG_CACHE_HOME"] = str(cache)  # an empty pip cache and an empty model cache
    env["MEMGATE_MEMORY_DIR"] = str(memory)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("VIRTUAL_ENV", None)
    return env


def _last_message(page: Any) -> Any | None:
    messages = page.locator(".stChatMessage")
    count = messages.count()
    return messages.nth(count - 1) if count >= 2 else None


def _wait_answer(page: Any, timeout: float, marks: dict[str, float]) -> str:
    """The assistant's text once the turn is drawn in full; marks when its first words showed.

    The app streams the reply with a cursor ("▌") from the first token on, and draws the
    turn's details once the turn is over (after capture, which runs behind the reply).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last = _last_message(page)
        if last is not None:
            if "first_words" not in marks and "▌" in last.inner_text():
                marks["first_words"] = time.perf_counter()
            # Not the "Local model ready" status box, which is an expander too.
            if last.locator('[data-testid="stExpander"]', has_text="Details ·").count():
                marks.setdefault("first_words", time.perf_counter())
                return last.inner_text()
        page.wait_for_timeout(100)
    raise TimeoutError(f"no finished answer within {timeout:.0f} s")


def _loaded(models: Path) -> bool:
    # One log per server port; any of them saying "listening" means the model is loaded.
    for log in models.glob("logs/llama-server-*.log"):
        with contextlib.suppress(OSError):
            if MODEL_READY_LINE in log.read_text(errors="replace"):
                return True
    return False


def _note(marks: dict[str, float], clone: Path, models: Path) -> None:
    """Record when each stage was first seen finished, from the files `make demo` writes."""
    now = time.perf_counter()
    seen = {
        "installed": (clone / ".venv" / ".stamp-local").exists(),
        "assembled": (models / GGUF).exists(),
        "loaded": "assembled" in marks and _loaded(models),
    }
    for name, done in seen.items():
        if done and name not in marks:
            marks[name] = now


def measure(keep: bool = False) -> dict[str, Any]:
    """One fresh clone, `make demo`, one message: seconds per stage and in total."""
    sys.path.insert(0, str(ROOT))
    from tests.browser import (
        browser_missing,
        chromium_page,
        free_port,
        send,
        wait_healthy,
        wait_usable,
    )  # the browser driver the tests use, not a copy of it

    if (why := browser_missing()) is not None:
        return {"skipped": why}
    tmp = Path(tempfile.mkdtemp(prefix="memgate-first-answer-"))
    clone, cache = tmp / "clone", tmp / "cache"
    models = cache / "memory-gate" / "models"
    port = free_port()
    marks: dict[str, float] = {}
    started = time.perf_counter()
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    marks["clone"] = time.perf_counter()
    log_path = tmp / "make-demo.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            ["make", "demo", f"PORT={port}"],
            cwd=clone,
            env=_env(cache, tmp / "memories"),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so stopping it stops streamlit and the model with it
        )
    url = f"http://127.0.0.1:{port}"
    result: dict[str, Any] = {"head": _head(clone), "message": MESSAGE}
    try:
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while "healthy" not in marks:
            _note(marks, clone, models)
            with contextlib.suppress(TimeoutError):
                wait_healthy(url, process, 0.3)
                marks["healthy"] = time.perf_counter()
            if time.monotonic() > deadline:
                raise TimeoutError(f"the demo did not answer within {SETUP_TIMEOUT_S:.0f} s")
        _note(marks, clone, models)
        venv_python = clone / ".venv" / "bin" / "python"
        result["local_model_installed_by_make_demo"] = (
            subprocess.run([str(venv_python), "-c", "import xllamacpp"]).returncode == 0
        )
        with chromium_page() as page:
            page.goto(url)
            wait_usable(page)
            marks["page"] = time.perf_counter()
            send(page, MESSAGE)
            answer_deadline = time.monotonic() + ANSWER_TIMEOUT_S
            while "loaded" not in marks:  # until then, the page says the model is loading
                if time.monotonic() > answer_deadline:
                    raise TimeoutError(f"the model did not load in {ANSWER_TIMEOUT_S:.0f} s")
                _note(marks, clone, models)
                page.wait_for_timeout(200)
            answer = _wait_answer(page, answer_deadline - time.monotonic(), marks)
            marks["answer"] = time.perf_counter()
            result["answer"] = answer.strip()[:300]
            result["panel"] = page.locator('section[data-testid="stSidebar"]').inner_text()[:400]
    except Exception as exc:  # noqa: BLE001 - reported with the log's tail, not hidden
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["log_tail"] = log_path.read_text(errors="replace")[-2000:]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 15)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
        if not keep:
            subprocess.run(["rm", "-rf", str(tmp)], check=False)
    result["seconds"] = {k: round(v - started, 1) for k, v in marks.items()}
    if "first_words" in marks:
        result["total_s"] = round(marks["first_words"] - started, 1)
    return result


def _head(clone: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(clone), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    )
    return out.stdout.strip()[:80]


def run(quick: bool = False) -> dict[str, Any]:
    """The bench section: measured in full runs only (it takes minutes)."""
    if quick:
        return {"skipped": "quick run (measure it alone: python -m bench first-answer)"}
    return measure()


def markdown(results: dict[str, Any], plots: Path) -> str:
    """The report lines for the first-answer figure and its stages."""
    if "skipped" in results:
        return f"Not measured: {results['skipped']}."
    if "error" in results:
        return f"Failed: `{results['error']}`\n\n```\n{results.get('log_tail', '')}\n```"
    s = results["seconds"]
    stages = [
        ("git clone", s.get("clone")),
        ("venv created and `.[local]` installed from the registries", s.get("installed")),
        ("model assembled from its 22 parts and verified", s.get("assembled")),
        ("Streamlit answers /health", s.get("healthy")),
        ("page usable in headless Chromium", s.get("page")),
        ("model loaded in llama.cpp", s.get("loaded")),
        (f"first words of the answer to {results['message']!r} on screen", s.get("first_words")),
        ("the turn drawn in full (reply, badge, details; after capture)", s.get("answer")),
    ]
    lines = [
        f"`make demo` on a fresh clone (commit {results['head'].split()[0]}), empty caches, to "
        "the local "
        f"model's first answer on screen: **{results['total_s']:.0f} s** "
        "(target <= 3 minutes, setup included). Seconds since the start:",
        "",
        *table_head("stage", "at s"),
    ]
    lines += [table_row(name, "" if at is None else f"{at:.1f}") for name, at in stages]
    if not results.get("local_model_installed_by_make_demo"):
        lines += ["", "`make demo` did not install xllamacpp: the answer is not the local model's."]
    drawn = " ".join(results["answer"].split())[:300]  # icon names included, as on the page
    lines += ["", f'The assistant\'s message, as drawn: "{drawn}"']
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench first-answer --help`)."""
    parser.add_argument("--keep", action="store_true", help="keep the fresh clone afterwards")


def command(args: argparse.Namespace) -> int:
    """Measure once and print the stages as JSON."""
    import json

    print(json.dumps(measure(keep=args.keep), indent=2))
    return 0
