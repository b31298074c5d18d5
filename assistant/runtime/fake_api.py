"""A fake Anthropic Messages API server on 127.0.0.1, for tests and benchmarks.

The real anthropic SDK talks to it over HTTP, so the tests cover the SDK's own request,
retry, timeout and streaming code. Replies are scripted: queue `Reply` objects, or give a
`script` that builds one from the request. Every request is recorded.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOLD_MAX_S = 60.0
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    """One scripted reply of the fake server."""

    text: str = ""
    thinking: str | None = None  # a thinking block sent before the text
    status: int = 200
    stop_reason: str = "end_turn"
    # Answer only once this is set: a reply slower than any timeout, with no race against
    # the clock (the test sets it when done; the server gives up waiting after HOLD_MAX_S).
    hold: threading.Event | None = None
    raw_body: bytes | None = None  # sent as-is (e.g. a body that is not JSON)
    headers: dict[str, str] = field(default_factory=dict)
    break_after: int | None = None  # streaming: drop the connection after N text deltas
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass
class Recorded:
    """A request the fake server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt_text(self) -> str:
        """System prompt plus all message text, for assertions about what the model saw."""
        parts: list[str] = []
        system = self.body.get("system")
        if isinstance(system, str):
            parts.append(system)
        elif isinstance(system, list):
            parts.extend(b.get("text", "") for b in system if isinstance(b, dict))
        for msg in self.body.get("messages", []):
            content = msg.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(b.get("text", "") for b in content if isinstance(b, dict))
        return "\n".join(parts)


ReplyScript = Callable[[Recorded], Reply]  # builds the reply to one request


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class FakeAnthropicServer:
    """A threaded HTTP server speaking enough of the Messages API for the SDK."""

    def __init__(self, script: ReplyScript | None = None) -> None:
        self._queue: queue.Queue[Reply] = queue.Queue()
        self.script = script or (lambda _req: Reply(text="ok"))
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll: stop() waits up to one poll, and tests start and stop many servers.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL to give the SDK (ANTHROPIC_BASE_URL)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropicServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order."""
        for reply in replies:
            self._queue.put(reply)

    def reset(self) -> None:
        """Forget queued replies and recorded requests."""
        with self._lock:
            self.requests.clear()
        while not self._queue.empty():
            self._queue.get_nowait()

    def _next_reply(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            return self.script(request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Without this every small response waits ~40 ms for a delayed ACK.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # keep test output clean

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                recorded = Recorded(self.path, dict(self.headers.items()), body)
                reply = fake._next_reply(recorded)
                if reply.hold is not None:
                    reply.hold.wait(HOLD_MAX_S)
                try:
                    if reply.raw_body is not None:
                        self._send(reply.status, reply.raw_body, "application/json", reply)
                    elif reply.status != 200:
                        self._send_error(reply)
                    elif body.get("stream"):
                        self._send_stream(reply, body, recorded)
                    else:
                        self._send_message(reply, body, recorded)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (e.g. its timeout fired): nothing to do

            def _send(self, status: int, data: bytes, ctype: str, reply: Reply) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_error(self, reply: Reply) -> None:
                kind = ERROR_TYPES.get(reply.status, "api_error")
                data = json.dumps(
                    {"type": "error", "error": {"type": kind, "message": f"fake {kind}"}}
                ).encode()
                self._send(reply.status, data, "application/json", reply)

            def _usage(self, reply: Reply, recorded: Recorded) -> dict[str, int]:
                return {
                    "input_tokens": reply.input_tokens
                    if reply.input_tokens is not None
                    else _estimate_tokens(recorded.prompt_text),
                    "output_tokens": reply.output_tokens
                    if reply.output_tokens is not None
                    else _estimate_tokens(reply.text + (reply.thinking or "")),
                }

            def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
                blocks: list[dict[str, Any]] = []
                if reply.thinking is not None:
                    blocks.append(
                        {"type": "thinking", "thinking": reply.thinking, "signature": "sig"}
                    )
                if reply.text or reply.thinking is None:
                    blocks.append({"type": "text", "text": reply.text})
                return blocks

            def _send_message(self, reply: Reply, body: dict, recorded: Recorded) -> None:
                message = {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "fake"),
                    "content": self._blocks(reply),
                    "stop_reason": reply.stop_reason,
                    "stop_sequence": None,
                    "usage": self._usage(reply, recorded),
                }
                self._send(200, json.dumps(message).encode(), "application/json", reply)

            def _event(self, name: str, data: dict[str, Any]) -> None:
                payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
                self.wfile.flush()

            def _send_stream(self, reply: Reply, body: dict, recorded: Recorded) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                # Chunked, like the real API: a connection dropped mid-stream is then a
                # protocol error the client can see, not a clean end of the body.
                self.send_header("transfer-encoding", "chunked")
                self.send_header("connection", "close")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.close_connection = True
                usage = self._usage(reply, recorded)
                self._event(
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_fake",
                            "type": "message",
                            "role": "assistant",
                            "model": body.get("model", "fake"),
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
                        },
                    },
                )
                self._event("ping", {"type": "ping"})
                for index, block in enumerate(self._blocks(reply)):
                    if block["type"] == "thinking":
                        start = {"type": "thinking", "thinking": "", "signature": ""}
                        deltas = [{"type": "thinking_delta", "thinking": block["thinking"]}]
                        deltas.append({"type": "signature_delta", "signature": "sig"})
                    else:
                        start = {"type": "text", "text": ""}
                        deltas = [
                            {"type": "text_delta", "text": piece}
                            for piece in _pieces(block["text"])
                        ]
                    self._event(
                        "content_block_start",
                        {"type": "content_block_start", "index": index, "content_block": start},
                    )
                    for sent, delta in enumerate(deltas):
                        if reply.break_after is not None and sent >= reply.break_after:
                            return  # drop the connection mid-reply
                        self._event(
                            "content_block_delta",
                            {"type": "content_block_delta", "index": index, "delta": delta},
                        )
                    self._event(
                        "content_block_stop", {"type": "content_block_stop", "index": index}
                    )
                self._event(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": usage["output_tokens"]},
                    },
                )
                self._event("message_stop", {"type": "message_stop"})
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler


def _pieces(text: str, words: int = 3) -> list[str]:
    """Split text into small deltas the way a model streams it (whitespace kept)."""
    if not text:
        return []
    tokens = text.split(" ")
    return [
        " ".join(tokens[i : i + words]) + (" " if i + words < len(tokens) else "")
        for i in range(0, len(tokens), words)
    ]
