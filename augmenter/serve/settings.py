"""The `serve` node of the config as settings: where to listen, the bearer token, CORS and the input limits."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from augmenter.errors import ConfigError
from augmenter.redact import header_safe, register_secret

MIN_KEY_CHARS = 8  # shorter tokens are guessable, and too short to be masked in logs


@dataclass(frozen=True)
class ServeSettings:
    host: str = "127.0.0.1"
    port: int = 8000
    api_key_env: str | None = None  # the variable the bearer token was read from (None: no auth)
    api_key: str | None = field(default=None, repr=False)
    cors_origins: tuple[str, ...] = ()
    max_message_chars: int = 2000
    max_history_messages: int = 40
    workers: int = 1
    max_queue: int = 64

    @property
    def max_body_bytes(self) -> int:
        """The largest request body read: every message at its limit, JSON-escaped, plus room for the rest."""
        return (self.max_history_messages + 8) * self.max_message_chars * 6 + 65536

    @classmethod
    def from_config(cls, node: Mapping[str, Any] | None) -> ServeSettings:
        """From the composed `serve` node; the token is read from `$<api_key_env>` now (ConfigError when unset)."""
        values = {k: v for k, v in dict(node or {}).items() if v is not None or k == "api_key_env"}
        name = values.pop("api_key_env", None)
        key = None
        if name:
            key = os.environ.get(name, "")
            if len(key) < MIN_KEY_CHARS:
                state = "is not set" if not key else f"holds fewer than {MIN_KEY_CHARS} characters"
                raise ConfigError(
                    f"serve.api_key_env={name!r}: ${name} {state}; put the token clients must send "
                    "there, or set serve.api_key_env=null (no auth)"
                )
            register_secret(key)
            if not header_safe(key):
                raise ConfigError(
                    f"serve.api_key_env={name!r}: ${name} holds characters clients cannot send in an "
                    "HTTP header (not printable ASCII); use letters, digits and punctuation only"
                )
        values["cors_origins"] = tuple(values.get("cors_origins") or ())
        return cls(api_key_env=name or None, api_key=key, **values)
