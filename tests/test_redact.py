"""Secrets are masked: registered values and key-shaped strings, in text and in nested records."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from augmenter import redact as redact_module
from augmenter.redact import MASK, redact, redact_data, register_secret


@pytest.fixture(autouse=True)
def _registry():
    """Leave the process-wide registry as it was, so that no test's secrets mask another test's text."""
    saved = set(redact_module._secrets)
    yield
    redact_module._secrets.clear()
    redact_module._secrets.update(saved)


def test_a_registered_secret_is_masked_everywhere():
    register_secret("plain-Secret-4711")
    assert redact("key plain-Secret-4711 and again plain-Secret-4711.") == f"key {MASK} and again {MASK}."
    record = {"error": "401: plain-Secret-4711", "trace": [("x", "plain-Secret-4711")], "n": 3, "ok": None}
    assert redact_data(record) == {"error": f"401: {MASK}", "trace": [("x", MASK)], "n": 3, "ok": None}


def test_the_longest_secret_wins_and_short_or_empty_values_are_ignored():
    register_secret("overlap-key-1")
    register_secret("overlap-key-1-long")
    assert redact("overlap-key-1-long") == MASK
    for value in ("", None, "abc"):
        register_secret(value)
    assert redact("abc is a word") == "abc is a word"


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnop1234",
        "sk-abcdefghijklmnopqrstu",
        "hf_abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwx",
        "AKIAABCDEFGHIJKLMNOP",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz12",
        "xoxb-1234567890-abcdef",
    ],
)
def test_key_shaped_strings_are_masked_unregistered(secret):
    assert redact(f"the key {secret} was rejected") == f"the key {MASK} was rejected"


@pytest.mark.parametrize(
    "text, masked",
    [
        ("Authorization: Bearer abc.def-ghi_123", f"Authorization: Bearer {MASK}"),
        ('{"api_key": "zq81x9lmno"}', f'{{"api_key": "{MASK}"}}'),
        ("x-api-key: zq81x9lmno", f"x-api-key: {MASK}"),
        ("password=hunter22", f"password={MASK}"),
        ("GET /v1/models?key=zq81x9lmno&alt=json", f"GET /v1/models?key={MASK}&alt=json"),
    ],
)
def test_key_fields_are_masked(text, masked):
    assert redact(text) == masked


def test_ordinary_text_and_non_strings_are_left_alone():
    text = "The Alpha Hotel has free parking; ask the desk for a key card. Tokens: 42."
    assert redact(text) == text
    assert redact(None) is None and redact(7) == 7 and redact_data([1.5, {"k": True}]) == [1.5, {"k": True}]


key_chars = st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="-_", max_codepoint=127)


@given(secret=st.text(key_chars, min_size=6, max_size=40), before=st.text(max_size=30), after=st.text(max_size=30))
def test_a_registered_secret_never_survives(secret, before, after):
    register_secret(secret)
    try:
        assert secret not in redact(before + secret + after) or secret in MASK
    finally:
        redact_module._secrets.discard(secret)


def test_log_lines_are_redacted_once_the_cli_installed_the_filter():
    import logging

    from augmenter.redact import RedactingFilter, redact_logging

    register_secret("log-secret-value-123")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        redact_logging()
        assert any(isinstance(f, RedactingFilter) for f in handler.filters)
        try:
            raise RuntimeError("server said: log-secret-value-123")
        except RuntimeError:
            logging.getLogger("augmenter.test").error("key %s rejected", "log-secret-value-123", exc_info=True)
    finally:
        root.removeHandler(handler)
    text = stream.getvalue()
    assert "log-secret-value-123" not in text and text.count("[REDACTED]") >= 2 and "RuntimeError" in text
