"""Secrets never leave the process: API keys are masked in every message, trace, record and log line.

`redact(text)` replaces the values registered with `register_secret` (the configured keys, read from their
environment variables by the backends) and anything that looks like a common API key or bearer token.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

MASK = "[REDACTED]"
_MIN_SECRET = 6  # shorter values (a placeholder like "x") would mask ordinary words
_secrets: set[str] = set()
_lock = threading.Lock()

# OpenAI-style keys (sk-..., sk-proj-...), Hugging Face, GitHub, AWS access key ids, Google API keys, Slack tokens;
# and the value after "Bearer ", after an api-key style field ("api_key": "...", x-api-key: ...) or in a URL's
# key/token query parameter (?key=..., &access_token=...).
_KEYS = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}|\bhf_[A-Za-z0-9]{20,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bAKIA[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_\-]{30,}|\bxox[abpr]-[A-Za-z0-9\-]{10,}"
)
_FIELDS = re.compile(
    r"(\bbearer\s+|\bapi[_-]?key[\"']?\s*[:=]\s*[\"']?|\bpassword[\"']?\s*[:=]\s*[\"']?"
    r"|[?&](?:key|token|access_token)=)"
    r"([A-Za-z0-9._~+/=\-]{6,})",
    re.IGNORECASE,
)


def header_safe(value: str) -> bool:
    """Whether `value` can travel in an HTTP header (printable ASCII): a key with other characters fails every
    request it is sent with."""
    return value.isascii() and value.isprintable()


def register_secret(value: str | None) -> None:
    """Mask `value` wherever it appears from now on (ignored when empty or too short to be a key)."""
    if value and len(value) >= _MIN_SECRET:
        with _lock:
            _secrets.add(value)


def redact(text: Any) -> Any:
    """`text` with registered secrets and key-like strings masked; non-strings are returned unchanged."""
    if not isinstance(text, str) or not text:
        return text
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return _FIELDS.sub(lambda m: m.group(1) + MASK, _KEYS.sub(MASK, text))


def redact_data(value: Any) -> Any:
    """`redact` applied to every string inside nested dicts, lists and tuples (e.g. a record before it is written)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_data(v) for v in value)
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in every record's message (and its formatted traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.exc_text = redact(record.exc_text)
        return True


def redact_logging() -> None:
    """Mask secrets in every log line from here on: the filter on each handler of the root logger, and on
    `logging.lastResort` (what prints when no handler is configured)."""
    for handler in [*logging.getLogger().handlers, logging.lastResort]:
        if handler is not None and not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
