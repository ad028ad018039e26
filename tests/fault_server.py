"""A fault-injecting OpenAI-compatible chat-completions server for tests, on 127.0.0.1 (a free port).

    with FaultServer(mode="500", fail_first=2) as srv:   # two 500s, then normal replies
        llm = OpenAICompatLLM(model="m", base_url=srv.base_url)

`POST /v1/chat/completions` answers according to `srv.mode` (settable at any time):

- ok: a normal completion whose text is `srv.reply`, with usage (words counted as tokens) and per-token logprobs
  when the request asks for them
- 500: HTTP 500 with a JSON error body
- 429: HTTP 429 with `Retry-After: srv.retry_after` (default "0"); 400: HTTP 400 (a bad request: not retryable)
- flaky: HTTP 500 for about 30% of the requests (RNG seeded by `seed`), else ok
- hang: sends nothing for `srv.hang_seconds` (default 30) or until `close()`, then answers ok
- reset: closes the connection (TCP reset) without any response
- invalid_json: a 200 `application/json` body that is not JSON
- html: a 200 with an HTML page (a captive portal or a proxy's page)
- no_choices: JSON without `choices`; empty_choices: `"choices": []`; empty_content: `"content": ""`
- huge: a 50 kB reply (`HUGE`); markup: rich/HTML markup (`MARKUP`); escapes: terminal escape codes (`ESCAPES`)
- auth: HTTP 401 whose JSON error message echoes the key from the `Authorization` header (as OpenAI's does)

With `fail_first=N` the mode applies to the first N requests (as counted by `srv.requests`); later ones are ok.
`srv.planner`, a function of the request's JSON body returning a mode, overrides both (a plan per turn).
`GET /v1/models` lists one model. `srv.requests` counts every HTTP request; `srv.last_request` is the last
chat request's JSON body. Handler threads are daemons with a bounded socket timeout; `close()` (or leaving
the `with` block) stops the server and wakes hanging handlers.
"""

from __future__ import annotations

import json
import random
import socket
import struct
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HUGE = "0123456789" * 5000
MARKUP = "[/b] [red]x[/red] <script>alert(1)</script>"
ESCAPES = "\x1b[31mred\x1b[0m\x1b]0;title\x07"
MODES = (
    "ok",
    "500",
    "429",
    "400",
    "flaky",
    "hang",
    "reset",
    "invalid_json",
    "html",
    "no_choices",
    "empty_choices",
    "empty_content",
    "huge",
    "markup",
    "escapes",
    "auth",
)
_TEXT = {"huge": HUGE, "markup": MARKUP, "escapes": ESCAPES, "empty_content": ""}


class _Handler(BaseHTTPRequestHandler):
    timeout = 10  # socket timeout: a silent client cannot hold a handler thread forever
    server: _Server

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def _send(
        self, status: int, body: str | bytes, content_type: str = "application/json", headers: dict | None = None
    ) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout): nothing to answer
            pass

    def do_GET(self) -> None:
        self.server.owner._count()
        if self.path.rstrip("/").endswith("/models"):
            self._send(
                200,
                json.dumps(
                    {
                        "object": "list",
                        "data": [{"id": self.server.owner.model, "object": "model", "owned_by": "tests"}],
                    }
                ),
            )
        else:
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))

    def do_POST(self) -> None:
        owner = self.server.owner
        number = owner._count()
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except (OSError, ValueError):
            request = {}
        owner.last_request = request
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
        if owner.planner is not None:  # a per-request plan (bench/faults.py: one per turn)
            mode = owner.planner(request)
        else:
            mode = owner.mode if not owner.fail_first or number <= owner.fail_first else "ok"
        if mode == "flaky":
            with owner._lock:
                mode = "500" if owner._rng.random() < 0.3 else "ok"
        if mode == "hang":
            if owner._stop.wait(owner.hang_seconds):
                return
            mode = "ok"
        if mode == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return

        def error(message, kind):
            return json.dumps({"error": {"message": message, "type": kind}})

        if mode == "500":
            return self._send(500, error("internal error (fault server)", "server_error"))
        if mode == "429":
            return self._send(
                429,
                error("rate limited (fault server)", "rate_limit_error"),
                headers={"Retry-After": owner.retry_after},
            )
        if mode == "400":
            return self._send(400, error("bad request (fault server)", "invalid_request_error"))
        if mode == "auth":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return self._send(401, error(f"Incorrect API key provided: {key}.", "invalid_request_error"))
        if mode == "invalid_json":
            return self._send(200, '{"id": "chatcmpl-x", "choices": [{"message": ')
        if mode == "html":
            return self._send(200, "<html><body><h1>Welcome to the captive portal</h1></body></html>", "text/html")
        body = {"id": "chatcmpl-fault", "object": "chat.completion", "created": 0, "model": owner.model}
        text = _TEXT.get(mode, owner.reply)
        if mode != "no_choices":
            body["choices"] = [] if mode == "empty_choices" else [self._choice(text, request)]
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        words = sum(len(str(m.get("content", "")).split()) for m in messages)
        body["usage"] = {
            "prompt_tokens": words,
            "completion_tokens": len(text.split()),
            "total_tokens": words + len(text.split()),
        }
        self._send(200, json.dumps(body))

    @staticmethod
    def _choice(text: str, request: dict) -> dict:
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        if request.get("logprobs"):
            choice["logprobs"] = {
                "content": [
                    {
                        "token": word,
                        "logprob": -0.1,
                        "top_logprobs": [{"token": word, "logprob": -0.1}, {"token": "No", "logprob": -2.5}],
                    }
                    for word in text.split()
                ]
            }
        return choice


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FaultServer


class FaultServer:
    """The server, started on construction; use it as a context manager or call `close()`."""

    def __init__(
        self,
        mode: str = "ok",
        reply: str = "Hello from the fault server.",
        fail_first: int = 0,
        hang_seconds: float = 30.0,
        retry_after: str = "0",
        seed: int = 0,
        model: str = "fault-model",
    ):
        self.mode, self.reply, self.fail_first = mode, reply, fail_first
        self.hang_seconds, self.retry_after, self.model = hang_seconds, retry_after, model
        self.requests = 0
        self.last_request: dict = {}
        self.planner: Callable[[dict], str] | None = None  # request -> mode, overriding `mode` when set
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fault-server-{self.port}",
            daemon=True,
        )
        self._thread.start()

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in MODES:
            raise ValueError(f"unknown mode {value!r}; modes: {', '.join(MODES)}")
        self._mode = value

    def _count(self) -> int:
        with self._lock:
            self.requests += 1
            return self.requests

    def close(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)

    def __enter__(self) -> FaultServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
