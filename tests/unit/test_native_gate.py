"""How the native gate reads the built-in model's first token: the decision's meaning.

A real model cannot be made to say P(true) = 0.9 on cue, so a tiny stand-in for llama.cpp's
native endpoints answers here; the real server is in tests/integration/test_local_model.py.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assistant.gates.base import Method
from assistant.gates.native import NativeLlamaGate


class _Native(BaseHTTPRequestHandler):
    p_true = 0.5
    prompts: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/apply-template":
            out = {"prompt": "<user>" + body["messages"][0]["content"] + "<end><assistant>"}
        elif self.path == "/tokenize":
            out = {"tokens": [837]}
        else:
            type(self).prompts.append(body["prompt"])
            first = [
                {"token": " true", "logprob": math.log(self.p_true)},
                {"token": " false", "logprob": math.log(1 - self.p_true)},
            ]
            out = {"content": " true", "completion_probabilities": [{"top_logprobs": first}]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def native() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Native)
    # A short poll: shutdown() waits up to one poll interval (0.5 s by default) per test.
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    _Native.prompts = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize(("p_true", "retrieves"), [(0.9, False), (0.2, True)])
def test_the_yes_no_gate_retrieves_when_the_model_says_the_notes_are_needed(
    native: str, p_true: float, retrieves: bool
) -> None:
    # Its question is "can you answer WITHOUT the notes?": a confident "true" skips.
    _Native.p_true = p_true
    decision = NativeLlamaGate(native, style="yes-no", threshold=0.5).decide("When is it?")
    assert decision.method is Method.MODEL
    assert decision.retrieve is retrieves
    assert decision.confidence == pytest.approx(1 - p_true)


def test_the_json_style_reads_true_as_retrieve(native: str) -> None:
    _Native.p_true = 0.9
    decision = NativeLlamaGate(native, style="json").decide("When is it?")
    assert decision.confidence == pytest.approx(0.9)


def test_a_multi_line_message_stays_on_the_one_line_the_model_answers_after(native: str) -> None:
    NativeLlamaGate(native, style="yes-no").decide("first line\n\nsecond line")
    assert _Native.prompts[-1].endswith("first line second line ->")
