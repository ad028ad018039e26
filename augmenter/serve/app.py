"""The HTTP app: the OpenAI-compatible API, health and readiness, and the web chat page."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
import traceback
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from starlette.exceptions import HTTPException
from starlette.staticfiles import StaticFiles

from augmenter.errors import CircuitOpenError, LLMFatalError
from augmenter.redact import redact
from augmenter.serve.openai_format import ApiError, Reply, error_body, parse_chat_request
from augmenter.serve.pool import Abandoned, AgentPool, Busy, TurnResult
from augmenter.serve.settings import ServeSettings
from augmenter.serve.summary import turn_summary, usage

log = logging.getLogger(__name__)
STATIC = resources.files("augmenter.serve") / "static"
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) past `limit` bytes without reading the rest."""
    too_big = ApiError(413, f"the request body is larger than {limit} bytes", code="request_too_large")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > limit:
            raise too_big
    return bytes(body)


def _turn_error(exc: BaseException) -> ApiError:
    """What a failed turn tells the client (secrets masked, no traceback)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, Busy):
        return ApiError(429, str(exc), code="busy", kind="rate_limit_error", headers={"Retry-After": "1"})
    if isinstance(exc, CircuitOpenError):
        return ApiError(
            503,
            f"the language model is unavailable: {exc}",
            code="llm_unavailable",
            kind="server_error",
            headers={"Retry-After": "30"},
        )
    if isinstance(exc, LLMFatalError):
        return ApiError(502, f"the language model refused this server: {exc}", code="llm_refused", kind="server_error")
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    log.error("a turn crashed: %s", redact(trace))  # masked here too: a library user's handlers may not mask
    return ApiError(
        500,
        f"the turn failed ({type(exc).__name__}); the server log has the details",
        code="internal_error",
        kind="server_error",
    )


def _auth_error(sent: str | None, key: str) -> ApiError | None:
    """Why a request's Authorization header does not let it in (None: it does): no header, not a bearer token, or
    a wrong token, told apart; nothing about the expected token is said."""
    headers = {"WWW-Authenticate": "Bearer"}
    if not (sent or "").strip():
        return ApiError(
            401,
            "this server needs an API key: send the header Authorization: Bearer <key>",
            code="missing_api_key",
            headers=headers,
        )
    scheme, _, token = sent.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return ApiError(
            401,
            "the Authorization header is not a bearer token: send Authorization: Bearer <key>",
            code="invalid_authorization",
            headers=headers,
        )
    if not hmac.compare_digest(token.strip().encode("utf-8", "replace"), key.encode()):
        return ApiError(
            401,
            "the API key sent (Authorization: Bearer <key>) is not this server's key",
            code="invalid_api_key",
            headers=headers,
        )
    return None


def create_app(pool: AgentPool, settings: ServeSettings = ServeSettings()) -> FastAPI:
    """The app around a built pool of agents (see `augmenter.serve.pool`)."""
    app = FastAPI(title="augmenter", docs_url=None, redoc_url=None, openapi_url=None)
    started = int(time.time())

    if settings.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if request.url.path.startswith("/v1/") and settings.api_key and request.method != "OPTIONS":
            error = _auth_error(request.headers.get("authorization"), settings.api_key)
            if error is not None:
                return JSONResponse(error.body(), error.status, headers=error.headers)
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError):
        return JSONResponse(exc.body(), exc.status, headers=exc.headers)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException):
        kind = "not_found" if exc.status_code == 404 else "invalid_request"
        return JSONResponse(error_body(str(exc.detail), kind), exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def crash(_: Request, exc: Exception):
        error = _turn_error(exc)
        return JSONResponse(error.body(), error.status, headers=error.headers)

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(str(STATIC / "index.html"), media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    @app.get("/healthz")
    async def healthz():
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz():
        body = {
            "status": pool.state,
            "model": pool.model,
            "workers": pool.workers,
            "busy": pool.busy,
            "waiting": pool.waiting,
            "auth": bool(settings.api_key),
            "limits": {
                "max_message_chars": settings.max_message_chars,
                "max_history_messages": settings.max_history_messages,
            },
        }
        if pool.state != "ready":
            body["error"] = redact(pool.error)
        return JSONResponse(body, 200 if pool.state == "ready" else 503)

    def _model() -> dict[str, Any]:
        return {
            "id": pool.model,
            "object": "model",
            "created": started,
            "owned_by": "augmenter",
            "llm": redact(pool.llm),
        }

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [_model()]}

    @app.get("/v1/models/{name:path}")
    async def model(name: str):
        if name != pool.model:
            raise ApiError(
                404, f"no model named {name[:80]!r}: this server serves {pool.model!r}", code="model_not_found"
            )
        return _model()

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        received = time.perf_counter()
        if pool.state != "ready":
            raise ApiError(
                503, f"not ready: {pool.state}", code="not_ready", kind="server_error", headers={"Retry-After": "5"}
            )
        body = await _read_body(request, settings.max_body_bytes)
        chat = parse_chat_request(body, settings.max_message_chars, settings.max_history_messages)
        reply = Reply(pool.model)
        if chat.stream:
            pool.check_capacity()
            from sse_starlette.sse import EventSourceResponse

            return EventSourceResponse(_stream(pool, chat, reply, received), sep="\n", ping=10)
        try:
            result = await pool.answer(chat.question, chat.history)
        except Exception as exc:  # each becomes its one-line error reply
            raise _turn_error(exc) from None
        _log_turn(result)
        summary = turn_summary(result.memory, result.queue_seconds, time.perf_counter() - received)
        return JSONResponse(reply.completion(redact(result.memory.response or ""), usage(result.memory), summary))

    return app


def _log_turn(result: TurnResult) -> None:
    mem = result.memory
    log.info(
        "turn: %s, %d LLM calls, %.2f s (%.3f s queued)",
        mem.outcome,
        mem.llm_calls,
        result.seconds,
        result.queue_seconds,
    )


async def _stream(pool: AgentPool, chat, reply: Reply, received: float) -> AsyncIterator[dict]:
    """The turn as OpenAI chunks: the role, then `augmenter` events (the draft as it streams, each action) with
    empty deltas, then the checked answer as content, a final chunk with the summary, usage if asked, [DONE]."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue = asyncio.Queue()
    abandoned = threading.Event()

    def put(event):  # called from the worker thread
        return loop.call_soon_threadsafe(events.put_nowait, event)

    task = pool.start(chat.question, chat.history, put, abandoned)
    task.add_done_callback(lambda _: events.put_nowait(("done", {})))
    try:
        yield {"data": reply.chunk({"role": "assistant", "content": ""})}
        while True:
            kind, data = await events.get()
            if kind == "done":
                break
            if kind == "draft":
                data = {**data, "text": redact(data["text"])}
            yield {"data": reply.chunk({}, augmenter={"event": kind, **data})}
        try:
            result = task.result()
        except (Abandoned, asyncio.CancelledError):
            return
        except Exception as exc:  # the stream has begun: the error goes in it
            yield {"data": json.dumps(_turn_error(exc).body(), ensure_ascii=False)}
            yield {"data": "[DONE]"}
            return
        _log_turn(result)
        mem = result.memory
        yield {"data": reply.chunk({"content": redact(mem.response or "")})}
        summary = {"event": "final", **turn_summary(mem, result.queue_seconds, time.perf_counter() - received)}
        yield {"data": reply.chunk({}, finish="stop", augmenter=summary)}
        if chat.include_usage:
            yield {"data": reply.chunk(None, usage=usage(mem))}
        yield {"data": "[DONE]"}
    finally:
        abandoned.set()
