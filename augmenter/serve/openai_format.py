"""The OpenAI chat-completions wire format: a request read into a turn (with clear 4xx errors), and replies,
stream chunks and errors written the way OpenAI's clients read them."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from augmenter.memory import Utterance
from augmenter.redact import redact
from augmenter.storage import json_error
from augmenter.text import one_line

ROLES = {"user": "U", "assistant": "S"}
IGNORED_ROLES = ("system", "developer")  # augmenter's own prompt instructs the model: these are accepted, unused


class ApiError(Exception):
    """An error reply: HTTP status, a one-line message, OpenAI's error type and code, optional headers."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str = "invalid_request",
        param: str | None = None,
        kind: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status, self.message, self.code, self.param, self.kind = status, message, code, param, kind
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.code, self.param, self.kind)


def error_body(
    message: str, code: str, param: str | None = None, kind: str = "invalid_request_error"
) -> dict[str, Any]:
    return {"error": {"message": redact(one_line(message, 500)), "type": kind, "param": param, "code": code}}


@dataclass
class ChatRequest:
    question: str
    history: list[Utterance] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False


def _content(value: Any, where: str) -> str:
    """A message's text: a string, or a list of text parts (what newer clients send)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for j, part in enumerate(value):
            if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
                raise ApiError(400, f"{where}[{j}] is not a text part: augmenter reads text only", param=where)
            parts.append(part["text"])
        return "\n".join(parts)
    raise ApiError(
        400,
        f"{where} must be text (a string or a list of text parts), got "
        f"{'nothing' if value is None else type(value).__name__}",
        param=where,
    )


def parse_chat_request(body: bytes, max_message_chars: int, max_history_messages: int) -> ChatRequest:
    """The turn a request asks for: its last message (the user's question) and the messages before it."""
    try:
        data = json.loads(body.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ApiError(400, "the request body is not UTF-8 text", code="invalid_json") from None
    except ValueError as exc:
        why = json_error(exc) if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise ApiError(400, f"the request body is not valid JSON: {why}", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object with `messages`", code="invalid_json")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "`messages` must be a non-empty list of {role, content} objects", param="messages")
    turns: list[tuple[int, str, str]] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise ApiError(400, f"{where} must be an object with `role` and `content`", param=where)
        role = message.get("role")
        if role not in ROLES and role not in IGNORED_ROLES:
            shown = json.dumps(role)[:40] if isinstance(role, (str, int, float, type(None))) else type(role).__name__
            raise ApiError(
                400,
                f"{where}.role is {shown}: augmenter takes user, assistant and system messages "
                "(tool and function messages are not supported)",
                code="invalid_role",
                param=f"{where}.role",
            )
        text = _content(message.get("content"), f"{where}.content")
        if len(text) > max_message_chars:
            raise ApiError(
                413,
                f"{where}.content has {len(text)} characters; the limit is {max_message_chars} "
                "(serve.max_message_chars)",
                code="message_too_long",
                param=f"{where}.content",
            )
        if role in ROLES:
            turns.append((i, role, text))
    if not turns or turns[-1][1] != "user":
        raise ApiError(400, "the last user or assistant message must be the user's question", param="messages")
    last, _, question = turns[-1]
    if not question.strip():
        raise ApiError(
            400,
            f"messages[{last}].content is empty: ask a question",
            code="empty_message",
            param=f"messages[{last}].content",
        )
    if len(turns) - 1 > max_history_messages:
        raise ApiError(
            400,
            f"{len(turns) - 1} earlier messages; the limit is {max_history_messages} "
            "(serve.max_history_messages): send only the latest ones",
            code="history_too_long",
            param="messages",
        )
    for name in ("stream",):
        if not isinstance(data.get(name, False), bool):
            raise ApiError(400, f"`{name}` must be true or false", param=name)
    if data.get("n", 1) not in (1, None):
        raise ApiError(400, "`n` must be 1: augmenter sends one checked answer", param="n")
    options = data.get("stream_options") or {}
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    history = [Utterance(speaker=ROLES[role], text=text) for _, role, text in turns[:-1]]
    return ChatRequest(question, history, bool(data.get("stream", False)), include_usage)


class Reply:
    """One reply's id, time and model name, and its body or stream chunks in OpenAI's format."""

    def __init__(self, model: str):
        self.id, self.created, self.model = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), model

    def completion(self, text: str, usage: dict, summary: dict) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
            "augmenter": summary,
        }

    def chunk(self, delta: dict | None = None, finish: str | None = None, **extra: Any) -> str:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        body = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
            **extra,
        }
        return json.dumps(body, ensure_ascii=False)
