"""A tiny scripted server on 127.0.0.1 that speaks the OpenAI chat-completions protocol.

Not a mock of the client: the real OpenAI SDK (through llama-index) connects over HTTP and
parses real JSON and server-sent events. Each request takes the next step of the script:
a reply (JSON, or SSE when the request asks to stream), an HTTP error, a stall, a body that is
not JSON (`Malformed`) or a reply cut off mid-way (`Truncated`).
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """Answer with `text`; streamed word by word when the client asks for a stream."""

    text: str
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    )
    model: str = "local-test-model"
    finish_reason: str = "stop"  # "length" plays a reply cut off at the token limit
    delay: float = 0.0  # seconds between streamed pieces (a slow local model)


@dataclass
class Status:
    """Fail with an HTTP status, optional headers and an OpenAI-style error body."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted failure"


@dataclass
class Stall:
    """Wait `seconds` before sending anything (longer than the client's timeout)."""

    seconds: float


@dataclass
class Malformed:
    """Answer 200 with a body that is not valid JSON.

    Unstreamed, the whole body is `body`. Streamed, the first `tokens` words of `text` arrive as
    good events, then an event whose data is `body`, then the server hangs up.
    """

    body: str = '{"id": "chatcmpl-local", "object": "chat.completion", "choices": [{"mess'
    content_type: str = "application/json"
    text: str = ""
    tokens: int = 0


@dataclass
class Truncated:
    """Start the reply, then hang up without finishing it.

    Streamed: the first `tokens` words of `text`, then the connection closes with no finish
    reason and no `data: [DONE]`. Unstreamed: half the JSON body of the reply, under a
    Content-Length promising all of it.
    """

    text: str
    tokens: int = 2


class FakeOpenAI:
    """Run the scripted server in a thread; use as a context manager."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: dict[str, Any]) -> Any:
        with self._lock:
            self.requests.append(request)
            return self.script.pop(0) if self.script else Status(500, message="script exhausted")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                step = fake._next({"path": self.path, "headers": dict(self.headers), "body": body})
                try:
                    if self.path != "/v1/chat/completions":
                        self._json(404, {"error": {"message": f"no route {self.path}"}})
                    elif isinstance(step, Stall):
                        fake._stop.wait(step.seconds)
                        self._json(200, _completion("too late", Reply("too late"), body))
                    elif isinstance(step, Status):
                        self._json(step.code, {"error": {"message": step.message, "type": "test"}}, step.headers)
                    elif isinstance(step, Malformed):
                        self._malformed(step, bool(body.get("stream")))
                    elif isinstance(step, Truncated):
                        self._truncated(step, body)
                    elif body.get("stream"):
                        self._stream(step, body)
                    else:
                        self._json(200, _completion(step.text, step, body))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

            def _json(self, code: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply, body: dict) -> None:
                self._start_stream()
                for i, piece in enumerate(_pieces(reply.text)):
                    if i and reply.delay:
                        fake._stop.wait(reply.delay)
                    self._event(_chunk(reply, {"content": piece}))
                self._event(_chunk(reply, {}, finish=reply.finish_reason))
                if (body.get("stream_options") or {}).get("include_usage"):
                    self._event({**_chunk(reply, {}), "choices": [], "usage": reply.usage})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _malformed(self, step: Malformed, stream: bool) -> None:
                if stream:
                    self._start_stream()
                    reply = Reply(step.text)
                    for piece in _pieces(step.text)[: step.tokens]:
                        self._event(_chunk(reply, {"content": piece}))
                    self.wfile.write(b"data: " + step.body.encode() + b"\n\n")
                    self.wfile.flush()
                    return
                data = step.body.encode()
                self.send_response(200)
                self.send_header("content-type", step.content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _truncated(self, step: Truncated, body: dict) -> None:
                reply = Reply(step.text)
                if body.get("stream"):
                    self._start_stream()
                    for piece in _pieces(step.text)[: step.tokens]:
                        self._event(_chunk(reply, {"content": piece}))
                else:
                    data = json.dumps(_completion(step.text, reply, body)).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                self.close_connection = True  # HTTP/1.0 already closes; say so anyway

            def _start_stream(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()

            def _event(self, payload: dict) -> None:
                self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
                self.wfile.flush()

        return Handler


def _pieces(text: str) -> list[str]:
    """Split into word-sized tokens that join back to exactly `text`."""
    out, current = [], ""
    for ch in text:
        current += ch
        if ch == " ":
            out.append(current)
            current = ""
    return out + ([current] if current else [])


def _completion(text: str, reply: Reply, body: dict) -> dict:
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body.get("model") or reply.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": reply.finish_reason}],
        "usage": reply.usage,
    }


def _chunk(reply: Reply, delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": reply.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
