"""The LLM layer under faults: the OpenAI-compatible backend against tests/fault_server.py, the disk cache, and the
fallbacks and circuit breaker of ResilientLLM. Fast: no model, short timeouts."""

from __future__ import annotations

import threading
import time

import pytest
from fault_server import ESCAPES, HUGE, MARKUP, FaultServer

from augmenter.errors import CircuitOpenError, ConfigError, LLMError, LLMFatalError
from augmenter.llm import CachedLLM, FakeLLM, MeteredLLM, OpenAICompatLLM, ResilientLLM, SamplingParams
from augmenter.llm.cache import cache_key

KEY = "fault-key-Zq81x9Lm"  # not shaped like any known key: only its registration can mask it
MSGS = [{"role": "user", "content": "Is there parking at the Alpha Hotel?"}]
P = SamplingParams(max_tokens=16)


@pytest.fixture
def make_llm(fault_server, monkeypatch):
    monkeypatch.setenv("FAULT_TEST_KEY", KEY)

    def make(**kwargs):
        options = dict(
            model="fault-model",
            base_url=fault_server.base_url,
            api_key_env="FAULT_TEST_KEY",
            timeout=2.0,
            deadline=5.0,
            max_retries=2,
            backoff=0.01,
        )
        return OpenAICompatLLM(**{**options, **kwargs})

    return make


def _clean_error(message: str, srv: FaultServer) -> None:
    assert "\n" not in message and "Traceback" not in message and KEY not in message
    assert srv.base_url in message and len(message) < 500


def test_ok_answers_with_usage(fault_server, make_llm):
    fault_server.reply = "Yes, parking is free."
    out = make_llm().complete(MSGS, P)
    assert out.text == "Yes, parking is free." and out.prompt_tokens == 7 and out.completion_tokens == 4
    assert out.served_by is None and fault_server.requests == 1
    assert fault_server.last_request["max_tokens"] == 16 and fault_server.last_request["messages"] == MSGS


def test_logprobs_are_parsed(fault_server, make_llm):
    fault_server.reply = "Yes"
    out = make_llm().complete(MSGS, SamplingParams(max_tokens=1, logprobs=5))
    assert out.top_logprobs == [{"Yes": -0.1, "No": -2.5}]
    assert fault_server.last_request["top_logprobs"] == 5


@pytest.mark.parametrize(
    "mode, reason",
    [
        ("invalid_json", "not JSON (application/json"),
        ("html", "not JSON (text/html"),
        ("no_choices", "no `choices`"),
        ("empty_choices", "empty `choices`"),
        ("empty_content", "reply is empty"),
        ("400", "HTTP 400: bad request"),
    ],
)
def test_malformed_or_refused_replies_are_one_line_errors_not_retried(fault_server, make_llm, mode, reason):
    fault_server.mode = mode
    with pytest.raises(LLMError) as err:
        make_llm().complete(MSGS, P)
    assert type(err.value) is LLMError and reason in str(err.value)
    _clean_error(str(err.value), fault_server)
    assert fault_server.requests == 1


def test_auth_is_fatal_at_once_and_the_echoed_key_is_masked(fault_server, make_llm):
    fault_server.mode = "auth"
    llm = make_llm(max_retries=3)
    with pytest.raises(LLMFatalError) as err:
        llm.complete(MSGS, P)
    message = str(err.value)
    assert "HTTP 401" in message and "[REDACTED]" in message and "FAULT_TEST_KEY" in message
    _clean_error(message, fault_server)
    assert fault_server.requests == 1  # no retry
    assert KEY not in repr(llm) and KEY not in llm.identity


@pytest.mark.parametrize("mode", ["500", "429", "reset"])
def test_transient_failures_are_retried_until_the_server_recovers(fault_server, make_llm, mode):
    fault_server.mode, fault_server.fail_first = mode, 2
    assert make_llm(max_retries=2).complete(MSGS, P).text == fault_server.reply
    assert fault_server.requests == 3


@pytest.mark.parametrize("mode, reason", [("500", "HTTP 500"), ("reset", "connection failed")])
def test_retries_are_bounded(fault_server, make_llm, mode, reason):
    fault_server.mode = mode
    with pytest.raises(LLMError) as err:
        make_llm(max_retries=2).complete(MSGS, P)
    assert reason in str(err.value) and "gave up after 3 attempts" in str(err.value)
    _clean_error(str(err.value), fault_server)
    assert fault_server.requests == 3


def test_retry_after_is_honoured(fault_server, make_llm):
    fault_server.mode, fault_server.fail_first, fault_server.retry_after = "429", 1, "1"
    start = time.monotonic()
    assert make_llm().complete(MSGS, P).text == fault_server.reply
    assert time.monotonic() - start >= 1.0 and fault_server.requests == 2


def test_a_retry_after_beyond_the_deadline_fails_at_once(fault_server, make_llm):
    fault_server.mode, fault_server.retry_after = "429", "60"
    start = time.monotonic()
    with pytest.raises(LLMError, match="HTTP 429.*deadline"):
        make_llm(deadline=3.0).complete(MSGS, P)
    assert time.monotonic() - start < 1.0 and fault_server.requests == 1


def test_a_hanging_server_hits_the_deadline(fault_server, make_llm):
    fault_server.mode = "hang"
    start = time.monotonic()
    with pytest.raises(LLMError) as err:  # the second attempt may only wait for what is left of the deadline
        make_llm(timeout=1.0, deadline=1.5, max_retries=10).complete(MSGS, P)
    elapsed = time.monotonic() - start
    assert 1.4 <= elapsed < 1.5 + 0.35, elapsed
    assert "1.5 s deadline" in str(err.value) and fault_server.requests == 2
    _clean_error(str(err.value), fault_server)


def test_a_flaky_server_is_ridden_out(fault_server, make_llm):
    fault_server.mode = "flaky"
    llm = make_llm(max_retries=6, backoff=0)
    assert all(llm.complete(MSGS, P).text == fault_server.reply for _ in range(20))
    assert fault_server.requests > 20  # some 500s were retried


@pytest.mark.parametrize("mode, text", [("huge", HUGE), ("markup", MARKUP), ("escapes", ESCAPES)])
def test_odd_but_valid_replies_come_back_raw(fault_server, make_llm, mode, text):
    fault_server.mode = mode
    assert make_llm().complete(MSGS, P).text == text


def test_an_unreachable_server_is_a_connection_error():
    with FaultServer() as srv:
        url = srv.base_url
    llm = OpenAICompatLLM(model="m", base_url=url, max_retries=1, backoff=0.01, timeout=2)
    with pytest.raises(LLMError, match="connection failed") as err:
        llm.complete(MSGS, P)
    assert url in str(err.value) and "gave up after 2 attempts" in str(err.value)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1}, "timeout"),
        ({"deadline": 0}, "deadline"),
        ({"deadline": "soon"}, "deadline"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"backoff": -0.1}, "backoff"),
        ({"base_url": "ftp://host/v1"}, "base_url"),
        ({"base_url": "localhost:8000"}, "base_url"),
    ],
)
def test_the_constructor_refuses_bad_settings(kwargs, field):
    with pytest.raises(ValueError, match=f"llm.{field}"):
        OpenAICompatLLM(model="m", **kwargs)


def test_credentials_in_the_url_stay_out_of_identity_repr_and_errors():
    llm = OpenAICompatLLM(
        model="m", base_url="http://user:url-secret-77@127.0.0.1:9/v1?token=q", max_retries=0, timeout=1
    )
    assert llm.identity == "openai|http://127.0.0.1:9/v1|m"
    assert "url-secret-77" not in repr(llm)
    with pytest.raises(LLMError) as err:
        llm.complete(MSGS, P)
    assert "url-secret-77" not in str(err.value)


# --- the disk cache ---------------------------------------------------------------------------------------------


def test_the_key_of_the_local_backend_is_unchanged():
    msgs = [
        {"role": "system", "content": "You answer."},
        {"role": "user", "content": "Is there parking at the Alpha Hotel? é"},
    ]
    model = "qwen2.5-coder-0.5b-instruct"
    assert (
        cache_key("local", model, msgs, SamplingParams())
        == "ead388180bcc9405a339aaf765e5e260ff905a7cafcc0c810e37bcbdceaed630"
    )
    assert (
        cache_key("local", model, msgs, SamplingParams(), endpoint=f"local|{model}")
        == "ead388180bcc9405a339aaf765e5e260ff905a7cafcc0c810e37bcbdceaed630"
    )
    params = SamplingParams(max_tokens=64, temperature=0.7, seed=3, stop=["\n"], logprobs=5)
    assert cache_key("local", model, msgs, params) == "5471ff667b88fb129158de82b8732b9d9769a2107e918ff3c3348a6ffa8722ab"


def test_two_servers_with_the_same_model_do_not_share_cache_entries(tmp_path, monkeypatch):
    with FaultServer(reply="from server A") as a, FaultServer(reply="from server B") as b:
        llm_a, llm_b = (CachedLLM(OpenAICompatLLM(model="same", base_url=s.base_url), tmp_path) for s in (a, b))
        assert cache_key("openai", "same", MSGS, P, llm_a.identity) != cache_key(
            "openai", "same", MSGS, P, llm_b.identity
        )
        assert llm_a.complete(MSGS, P).text == "from server A"
        assert llm_b.complete(MSGS, P).text == "from server B"
        again = llm_a.complete(MSGS, P)
        assert again.cached and again.text == "from server A" and a.requests == 1 and b.requests == 1


def test_errors_and_empty_replies_are_not_cached(tmp_path):
    import diskcache

    fake = FakeLLM(responses=[LLMError("server down"), ""], default="the answer")
    llm = CachedLLM(fake, tmp_path)
    with pytest.raises(LLMError, match="server down"):
        llm.complete(MSGS, P)
    assert llm.complete(MSGS, P).text == ""
    assert len(diskcache.Cache(str(tmp_path))) == 0
    assert llm.complete(MSGS, P).text == "the answer"
    assert len(diskcache.Cache(str(tmp_path))) == 1
    other = [{"role": "user", "content": "an entry an older version stored empty"}]
    diskcache.Cache(str(tmp_path)).set(
        cache_key("fake", "scripted", other, P), {"text": " ", "prompt_tokens": 1, "completion_tokens": 0}
    )
    assert llm.complete(other, P).text == "the answer" and len(fake.calls) == 4  # not replayed: asked again
    hit = llm.complete(MSGS, P)
    assert hit.cached and hit.text == "the answer"


def test_a_corrupt_cache_is_moved_aside_and_rebuilt(tmp_path):
    (tmp_path / "cache.db").write_bytes(b"this is not a database" * 100)
    with pytest.warns(RuntimeWarning, match="moved it aside"):
        llm = CachedLLM(FakeLLM(default="fresh"), tmp_path)
    aside = list(tmp_path.glob("cache.db.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")
    assert not llm.complete(MSGS, P).cached and llm.complete(MSGS, P).cached


def test_a_cache_read_error_mid_run_is_a_miss(tmp_path):
    llm = CachedLLM(FakeLLM(default="fresh"), tmp_path)
    assert not llm.complete(MSGS, P).cached
    for path in tmp_path.glob("cache.db*"):  # the index and its write-ahead log, broken under the open connection
        path.write_bytes(b"garbage" * 4096)
    with pytest.warns(RuntimeWarning) as caught:
        out = llm.complete(MSGS, P)
    assert out.text == "fresh" and not out.cached
    assert [str(w.message).split(" (")[0] for w in caught] == ["LLM cache read failed", "LLM cache write failed"]


# --- fallbacks and the circuit breaker ---------------------------------------------------------------------------


def test_a_fallback_answers_and_says_so(fault_server, make_llm):
    fault_server.mode = "500"
    llm = ResilientLLM(make_llm(max_retries=0), [FakeLLM(default="from the fallback")])
    out = llm.complete(MSGS, P)
    assert out.text == "from the fallback" and out.served_by == "fake|scripted"
    fault_server.mode = "ok"
    out = llm.complete(MSGS, P)
    assert out.text == fault_server.reply and out.served_by is None


def test_fatal_errors_fall_back_but_stop_without_a_fallback(fault_server, make_llm):
    fault_server.mode = "auth"
    assert ResilientLLM(make_llm(), [FakeLLM(default="backup")]).complete(MSGS, P).served_by == "fake|scripted"
    with pytest.raises(LLMFatalError):
        ResilientLLM(make_llm()).complete(MSGS, P)
    with pytest.raises(LLMFatalError, match="all 2 LLM backends failed"):
        ResilientLLM(make_llm(), [FakeLLM(responses=[LLMFatalError("403 on the fallback")])]).complete(MSGS, P)
    with pytest.raises(LLMError, match=r"all 2 LLM backends failed: openai\|.*HTTP 401.*; fake\|scripted: busy") as err:
        ResilientLLM(make_llm(), [FakeLLM(responses=[LLMError("busy")])]).complete(MSGS, P)
    assert type(err.value) is LLMError and KEY not in str(err.value)


def test_the_breaker_opens_refuses_without_calling_and_half_opens(fault_server, make_llm):
    fault_server.mode = "500"
    llm = ResilientLLM(make_llm(max_retries=0), max_consecutive_failures=3, cooldown=0.5)
    for _ in range(3):
        with pytest.raises(LLMError) as err:
            llm.complete(MSGS, P)
        assert not isinstance(err.value, CircuitOpenError)
    with pytest.raises(CircuitOpenError, match="failed 3 calls in a row.*HTTP 500.*retrying at"):
        llm.complete(MSGS, P)
    assert fault_server.requests == 3  # refused without contacting the server
    time.sleep(0.55)
    with pytest.raises(LLMError) as err:  # the half-open trial goes through, fails, and reopens the breaker
        llm.complete(MSGS, P)
    assert not isinstance(err.value, CircuitOpenError) and fault_server.requests == 4
    with pytest.raises(CircuitOpenError):
        llm.complete(MSGS, P)
    assert fault_server.requests == 4
    time.sleep(0.55)
    fault_server.mode = "ok"
    assert llm.complete(MSGS, P).text == fault_server.reply  # the trial succeeds: closed again
    assert llm.complete(MSGS, P).text == fault_server.reply and fault_server.requests == 6


def test_only_one_trial_call_goes_through_while_half_open():
    gate = threading.Event()
    fake = FakeLLM(
        responses=[LLMError("down"), lambda messages: "trial ok" if gate.wait(5) else "timed out"],
        default="closed again",
    )
    llm = ResilientLLM(fake, max_consecutive_failures=1, cooldown=0.05)
    with pytest.raises(LLMError):
        llm.complete(MSGS, P)
    time.sleep(0.1)
    results = []
    trial = threading.Thread(target=lambda: results.append(llm.complete(MSGS, P).text))
    trial.start()
    while len(fake.calls) < 2:
        time.sleep(0.01)
    with pytest.raises(CircuitOpenError, match="a trial call is under way"):
        llm.complete(MSGS, P)
    gate.set()
    trial.join(5)
    assert results == ["trial ok"] and len(fake.calls) == 2
    assert llm.complete(MSGS, P).text == "closed again"


def test_a_success_resets_the_count_of_failures():
    fake = FakeLLM(responses=[LLMError("a"), LLMError("b"), "ok", LLMError("c"), LLMError("d"), "ok again"])
    llm = ResilientLLM(fake, max_consecutive_failures=3, cooldown=60)
    outcomes = []
    for _ in range(6):
        try:
            outcomes.append(llm.complete(MSGS, P).text)
        except LLMError as exc:
            outcomes.append(type(exc).__name__)
    assert outcomes == ["LLMError", "LLMError", "ok", "LLMError", "LLMError", "ok again"]


@pytest.mark.parametrize("kwargs", [{"max_consecutive_failures": 0}, {"cooldown": -1}])
def test_the_breaker_refuses_bad_settings(kwargs):
    with pytest.raises(ValueError, match="llm_guard"):
        ResilientLLM(FakeLLM(), **kwargs)


def test_build_llm_wires_fallbacks_caches_and_the_guard(fault_server, tmp_path):
    from augmenter.config import build_llm, compose

    fault_server.mode = "500"
    cfg = compose(
        "chat",
        [
            "llm=openai",
            f"llm.base_url={fault_server.base_url}",
            "llm.model=fault-model",
            "llm.max_retries=0",
            "+llm.fallbacks=[{_target_: augmenter.llm.FakeLLM, default: backup}]",
            "llm_guard.max_consecutive_failures=2",
            "llm_cache.enabled=true",
            f"llm_cache.dir={tmp_path}",
        ],
    )
    llm = build_llm(cfg)
    assert isinstance(llm, MeteredLLM) and isinstance(llm.llm, ResilientLLM)
    assert [type(b) for b in llm.llm.backends] == [CachedLLM, CachedLLM]
    assert llm.llm.max_consecutive_failures == 2 and llm.llm.cooldown == 30
    assert llm.identity == f"openai|{fault_server.base_url}|fault-model"
    out = llm.complete(MSGS)
    assert out.text == "backup" and out.served_by == "fake|scripted"
    assert llm.complete(MSGS).cached  # the fallback's own cache
    assert len(cfg.llm.fallbacks) == 1  # the caller's config is left as it was


def test_build_llm_reports_a_bad_guard_as_a_config_error():
    from augmenter.config import build_llm, compose

    with pytest.raises(ConfigError, match="llm_guard"):
        build_llm(compose("chat", ["llm=fake", "llm_guard.cooldown=-5"]))
